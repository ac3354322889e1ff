package hotelreservation

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// An upstream whose name does not resolve when the caller starts (on
// Swarm a service's name appears once its task runs) is looked up again
// within a fraction of a second, not after reresolveEvery: the front end
// passed its health check and answered "no children to pick from" for
// five seconds after the deployment was healthy.
func TestUnresolvedUpstreamIsRetriedSoon(t *testing.T) {
	var running atomic.Bool
	saved := lookupHost
	lookupHost = func(_ context.Context, host string) ([]string, error) {
		if host != "hotel-search" || !running.Load() {
			return nil, errors.New("no such host")
		}
		return []string{"10.0.0.7"}, nil
	}
	defer func() { lookupHost = saved }()
	u, err := newUpstream("search", "hotel-search:8000", 2, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if got := u.resolvedNow(); len(got) != 0 {
		t.Fatalf("resolved %v before the name exists", got)
	}
	running.Store(true)
	appeared := time.Now()
	for len(u.resolvedNow()) == 0 {
		if time.Since(appeared) > reresolveEvery/2 {
			t.Fatalf("the name was not looked up again within %s of appearing", reresolveEvery/2)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := u.resolvedNow(); len(got) != 1 || got[0].Addr != "10.0.0.7:8000" {
		t.Errorf("resolved %v, want 10.0.0.7:8000", got)
	}
	t.Logf("resolved %s after the name appeared", time.Since(appeared).Round(time.Millisecond))
}
