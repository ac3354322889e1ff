package store

import (
	"errors"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

// A name that does not resolve when the service starts (its task is not
// running yet) is resolved again on a later request, not given up on.
func TestMemcachedNamesResolveWhenTheyExist(t *testing.T) {
	calls := 0
	l := &lazyServers{names: []string{"memcached:11211"}, resolve: func(names ...string) (*memcache.ServerList, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("lookup memcached: no such host")
		}
		return resolveServers("127.0.0.1:11211")
	}}
	if _, err := l.PickServer("k"); !errors.Is(err, memcache.ErrNoServers) {
		t.Fatalf("first pick: %v, want no servers while the name does not resolve", err)
	}
	addr, err := l.PickServer("k")
	if err != nil || addr.String() != "127.0.0.1:11211" {
		t.Fatalf("second pick: %v, %v; want the name resolved now", addr, err)
	}
	// a resolution that fails later keeps the last good list
	l.resolved = time.Now().Add(-2 * refreshEvery)
	l.resolve = func(...string) (*memcache.ServerList, error) { return nil, errors.New("dns down") }
	if addr, err := l.PickServer("k"); err != nil || addr.String() != "127.0.0.1:11211" {
		t.Fatalf("after a failed refresh: %v, %v; want the last good list", addr, err)
	}
}
