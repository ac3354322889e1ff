package rpc

import "sync"

// Clients are the clients a process made, by upstream service, so that a
// new address for an upstream (the orchestrator moved or scaled it) reaches
// every client of it, and all are closed together.
type Clients struct {
	mu     sync.Mutex
	byName map[string][]*Client
}

// New makes a client of upstream service name at addr.
func (cs *Clients) New(name, addr string, opts Options) *Client {
	client := NewClient(addr, opts)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byName == nil {
		cs.byName = map[string][]*Client{}
	}
	cs.byName[name] = append(cs.byName[name], client)
	return client
}

// SetAddr points every client of upstream service name at addr; false when
// there is none.
func (cs *Clients) SetAddr(name, addr string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, c := range cs.byName[name] {
		c.SetAddr(addr)
	}
	return len(cs.byName[name]) > 0
}

// Close closes every client.
func (cs *Clients) Close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, clients := range cs.byName {
		for _, c := range clients {
			c.Close()
		}
	}
}
