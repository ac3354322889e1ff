package gates

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

func TestProbeAnswer(t *testing.T) {
	rule := contract.Probe{Path: "/?n=1", Status: 200, MinBytes: 44, Regex: regexp.MustCompile(`^The result`)}
	const url = "http://127.0.0.1:2000/?n=1"
	right := []byte("The result of this run is :  249.123456789012")
	if wrong := ProbeAnswer(rule, url, 200, right); wrong != "" {
		t.Fatalf("a right answer refused: %s", wrong)
	}
	for name, c := range map[string]struct {
		status int
		body   []byte
		want   string
	}{
		"wrong status": {503, right, "GET " + url + ": status 503, want 200"},
		"empty body":   {200, []byte("[]"), "GET " + url + ": 2 bytes, want at least 44 (dataset not loaded?)"},
		"another app's answer": {200, []byte("<html><body><h1>It works!</h1></body></html>\n" + strings.Repeat("x", 100)),
			`does not match ^The result`},
	} {
		if wrong := ProbeAnswer(rule, url, c.status, c.body); !strings.Contains(wrong, c.want) {
			t.Errorf("%s: %q, want it to say %q", name, wrong, c.want)
		}
	}
	// a long wrong body is clipped in the message
	long := []byte(strings.Repeat("y", 500))
	if wrong := ProbeAnswer(rule, url, 200, long); len(wrong) > 200 || !strings.Contains(wrong, "…") {
		t.Errorf("a 500-byte body quoted whole: %q", wrong)
	}
}

func TestHealthyGate(t *testing.T) {
	jobs := []*orchestrator.Deployment{{Job: "sn", Version: 3}, {Job: "sn-db", Version: 1}}
	if g := HealthyGate("swarm", jobs, nil); g.Name != Healthy || !g.Passed || g.Detail != "every instance running and passing its health checks on swarm: sn v3, sn-db v1" {
		t.Fatalf("%+v", g)
	}
	g := HealthyGate("swarm", nil, errors.New("service sn: 0 of 2 tasks running after 5m0s"))
	if g.Name != Healthy || g.Passed || g.NotChecked || g.Breaks || g.Detail != "service sn: 0 of 2 tasks running after 5m0s" {
		t.Fatalf("a deployment that never came up passed: %+v", g)
	}
}
