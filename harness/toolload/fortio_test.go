package toolload

import (
	"os"
	"strings"
	"testing"
	"time"
)

// testdata/fortio-1.66.5.json is the real -json output of `fortio load -qps
// -1 -c 4 -t 2s` against fortio's own echo server.
func TestFortioParse(t *testing.T) {
	b, err := os.ReadFile("testdata/fortio-1.66.5.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fortio{}.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accounting.Due != 67268 || res.Accounting.Completed != 67268 || !res.Accounting.Balanced() {
		t.Errorf("accounting %s", res.Accounting)
	}
	if res.AchievedRate < 33000 || res.AchievedRate > 34000 {
		t.Errorf("achieved %.1f rps, fortio said 33632.3", res.AchievedRate)
	}
	if res.DurationSeconds < 2 || res.DurationSeconds > 2.01 {
		t.Errorf("duration %.3f s", res.DurationSeconds)
	}
	p := map[float64]int64{}
	for _, v := range res.Latency.Percentiles {
		p[v.Percentile] = v.Value
	}
	if p[50] != 512 || p[99] != 995 || p[100] != 7347 {
		t.Errorf("percentiles %v", p)
	}
	if len(res.Peers) != 1 || res.Peers[0].Addr != "127.0.0.1:18091" || res.Peers[0].Connections != 4 {
		t.Errorf("peers %+v", res.Peers)
	}
	ep := res.Endpoints[0]
	if ep.Label != "GET /echo?size=44" || ep.BodyBytes != 44*67268 {
		t.Errorf("endpoint %+v", ep)
	}
	if res.StatusCodes[200] != 67268 {
		t.Errorf("status codes %v", res.StatusCodes)
	}
}

func TestFortioParseRefusesGarbage(t *testing.T) {
	good, _ := os.ReadFile("testdata/fortio-1.66.5.json")
	for name, c := range map[string]struct{ in, want string }{
		"empty":      {"", "fortio result: unexpected end of JSON input"},
		"truncated":  {string(good[:len(good)/2]), "fortio result: unexpected end"},
		"not http":   {`{"RunType":"GRPC"}`, `run type "GRPC"`},
		"no hist":    {`{"RunType":"HTTP","ActualDuration":5}`, "no duration histogram"},
		"codes lost": {strings.Replace(string(good), `"200": 67268`, `"200": 67000`, 1), "67268 calls but 67000 return codes"},
		"bad code":   {strings.Replace(string(good), `"200": 67268`, `"OK": 67268`, 1), `status code "OK"`},
	} {
		_, err := Fortio{}.Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

// A fortio result whose histogram loses calls is refused with the figures
// and kept; one that ran shorter than its -t was interrupted.
func TestFortioResultThatContradictsItselfIsRefused(t *testing.T) {
	good, _ := os.ReadFile("testdata/fortio-1.66.5.json")
	res, err := Fortio{}.Parse([]byte(strings.Replace(string(good), `"Count": 66948`, `"Count": 66900`, 1)))
	if err == nil || !strings.Contains(err.Error(), "fortio result contradicts itself: 67268 calls but 67220 in the histogram's buckets") {
		t.Fatalf("buckets short of the count: %v", err)
	}
	if res == nil || res.Accounting.Due != 67268 {
		t.Fatalf("the contradicting result was not kept for the archive: %+v", res)
	}
	res, err = Fortio{}.Parse([]byte(strings.Replace(string(good), `"RequestedDuration": "2s"`, `"RequestedDuration": "30s"`, 1)))
	if err != nil || !res.Interrupted {
		t.Fatalf("2 s of a 30 s run: interrupted %v, %v", res.Interrupted, err)
	}
	res, err = Fortio{}.Parse(good)
	if err != nil || res.Interrupted || res.WallSeconds != 0 {
		t.Fatalf("the whole run: interrupted %v, wall %.3f s (the runner's to set), %v", res.Interrupted, res.WallSeconds, err)
	}
}

func TestFortioCommand(t *testing.T) {
	w, r, err := Fortio{}.Command(Request{URL: "http://127.0.0.1:1/x", Connections: 15, Warmup: 5 * time.Second, Duration: time.Minute, Timeout: time.Second}, "", "/alloc")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r, " "); got != "load -qps -1 -c 15 -r 0.0001 -timeout 1s -t 1m0s -json /alloc/result.json http://127.0.0.1:1/x" {
		t.Errorf("run: %s", got)
	}
	if got := strings.Join(w, " "); got != "load -qps -1 -c 15 -r 0.0001 -timeout 1s -t 5s http://127.0.0.1:1/x" {
		t.Errorf("warm-up: %s", got)
	}
	if w, _, _ := (Fortio{}).Command(Request{URL: "u", Connections: 1, Duration: time.Second}, "", "o"); w != nil {
		t.Errorf("no warm-up asked, got %v", w)
	}
	if _, _, err := (Fortio{}).Command(Request{URL: "u", Duration: time.Second}, "", "o"); err == nil {
		t.Error("0 connections accepted")
	}
}
