package testutil

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// ConsulKV answers the part of Consul's KV API the harness uses (raw gets,
// puts answering "true", deletes with ?recurse) from memory, for tests that
// run where no Consul does.
type ConsulKV struct {
	mu sync.Mutex
	kv map[string][]byte
	// failDeletes is how many deletes still fail as a Consul without a
	// leader answers them.
	failDeletes int
}

// NewConsulKV starts empty.
func NewConsulKV() *ConsulKV { return &ConsulKV{kv: map[string][]byte{}} }

// FailNextDeletes makes the next n deletes fail with a 500.
func (c *ConsulKV) FailNextDeletes(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failDeletes = n
}

// Keys lists the stored keys under prefix, sorted.
func (c *ConsulKV) Keys(prefix string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []string
	for k := range c.kv {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// ServeHTTP answers /v1/kv/<key>; any other path is not found.
func (c *ConsulKV) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key, ok := strings.CutPrefix(r.URL.Path, "/v1/kv/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet:
		v, ok := c.kv[key]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(v)
	case http.MethodPut:
		b, _ := io.ReadAll(r.Body)
		c.kv[key] = b
		io.WriteString(w, "true")
	case http.MethodDelete:
		if c.failDeletes > 0 {
			c.failDeletes--
			http.Error(w, "No cluster leader", http.StatusInternalServerError)
			return
		}
		for k := range c.kv {
			if k == key || r.URL.Query().Has("recurse") && strings.HasPrefix(k, key) {
				delete(c.kv, k)
			}
		}
		io.WriteString(w, "true")
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
