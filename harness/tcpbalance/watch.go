package tcpbalance

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// A backends file lets an orchestrator's template rewrite the set while
// connections flow: an autoscaled service gains and loses instances during
// the very load that is measured, and restarting the balancer to learn of
// them would drop every connection in flight (errors the autoscaler did not
// cause). The file holds host:port entries separated by commas, spaces or
// newlines; lines starting with # are comments.

// ParseBackends reads a backends file's text.
func ParseBackends(text string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			if _, _, err := net.SplitHostPort(f); err != nil {
				return nil, fmt.Errorf("backend %q: %w (host:port is needed)", f, err)
			}
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// SetBackends replaces the backends; connections already relayed keep theirs.
func (b *Balancer) SetBackends(backends []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if slices.Equal(b.Backends, backends) {
		return
	}
	b.Backends = slices.Clone(backends)
	b.next = 0
	for be := range b.downUntil {
		if !slices.Contains(backends, be) {
			delete(b.downUntil, be)
		}
	}
	b.logf("backends now %v", backends)
}

// WatchFile reads path every interval until ctx ends and takes its backends
// whenever they change. A missing, unreadable, empty or malformed file
// keeps the backends there were (logged), so a template caught mid-write
// never empties the balancer.
func (b *Balancer) WatchFile(ctx context.Context, path string, interval time.Duration) {
	var last string
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if data, err := os.ReadFile(path); err == nil && string(data) != last {
			last = string(data)
			switch bes, err := ParseBackends(last); {
			case err != nil:
				b.logf("%s: %v; the backends stay as they were", path, err)
			case len(bes) == 0:
				b.logf("%s: no backend; the backends stay as they were", path)
			default:
				b.SetBackends(bes)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
