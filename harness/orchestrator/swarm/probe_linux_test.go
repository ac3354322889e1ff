package swarm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	"github.com/orchbench/orchbench/harness/testutil"
)

// The checks run through a task's network namespace; this process's own
// namespace stands in for it (entering it needs the same privilege).
func TestProbeThroughANetworkNamespace(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte("ok"))
			return
		}
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	pid := os.Getpid()
	for _, c := range []struct {
		check translate.Check
		pass  bool
	}{
		{translate.Check{Type: "http", Address: addr, Path: "/healthz", Timeout: time.Second}, true},
		{translate.Check{Type: "http", Address: addr, Path: "/other", Timeout: time.Second}, false},
		{translate.Check{Type: "tcp", Address: addr, Timeout: time.Second}, true},
	} {
		if err := probe(ctx, &c.check, pid); (err == nil) != c.pass {
			t.Errorf("%+v: error %v, want pass %v", c.check, err, c.pass)
		}
	}
	closed := testutil.FreeAddr(t)
	if err := probe(ctx, &translate.Check{Type: "tcp", Address: closed, Timeout: time.Second}, pid); err == nil {
		t.Error("a closed port passed the tcp check")
	}
	if err := probe(ctx, &translate.Check{Type: "tcp", Address: addr, Timeout: time.Second}, 1<<30); err == nil {
		t.Error("a process that does not exist passed")
	}
}
