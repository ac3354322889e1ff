package store

import (
	"net"
	"sync"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

// refreshEvery is how long a resolution of the memcached names is trusted.
const refreshEvery = 5 * time.Second

// lazyServers resolves the memcached names when a request needs them, not
// once at start: an orchestrator whose DNS names a task only while it runs
// (Swarm's dnsrr) may start this service first, and a list resolved then
// would stay empty for good, every read falling through to the database
// (seen: FerretDB at 0.3 cores where memcached took the reads elsewhere).
// A replaced memcached task's new address is picked up the same way.
type lazyServers struct {
	names   []string
	resolve func(names ...string) (*memcache.ServerList, error)

	mu       sync.Mutex
	list     *memcache.ServerList
	resolved time.Time
}

func newLazyServers(names []string) *lazyServers {
	return &lazyServers{names: names, resolve: resolveServers}
}

func resolveServers(names ...string) (*memcache.ServerList, error) {
	var ss memcache.ServerList
	if err := ss.SetServers(names...); err != nil {
		return nil, err
	}
	return &ss, nil
}

// current is the resolved list, resolved again when it is missing or old;
// an old list stays in use while a new resolution fails.
func (l *lazyServers) current() (*memcache.ServerList, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.list != nil && time.Since(l.resolved) < refreshEvery {
		return l.list, nil
	}
	list, err := l.resolve(l.names...)
	if err != nil {
		if l.list != nil {
			return l.list, nil
		}
		return nil, err
	}
	l.list, l.resolved = list, time.Now()
	return list, nil
}

// PickServer implements memcache.ServerSelector.
func (l *lazyServers) PickServer(key string) (net.Addr, error) {
	list, err := l.current()
	if err != nil {
		return nil, memcache.ErrNoServers
	}
	return list.PickServer(key)
}

// Each implements memcache.ServerSelector.
func (l *lazyServers) Each(f func(net.Addr) error) error {
	list, err := l.current()
	if err != nil {
		return memcache.ErrNoServers
	}
	return list.Each(f)
}
