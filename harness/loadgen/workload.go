package loadgen

import (
	"bytes"
	"math/rand/v2"
	"time"
)

// Request is what a Workload asks a connection to send next.
type Request struct {
	Method  string
	Path    string // origin-form ("/a?b") or absolute-form, as wrk allows
	Headers []Header
	Body    []byte
	// Label groups the request in the per-endpoint breakdown; empty means
	// the default method + templated path.
	Label string
}

// Workload is the Go equivalent of a wrk Lua script's request() hook: code
// that supplies a request mix. Next is called concurrently from many
// connections, each passing its own RNG, so implementations should keep any
// shared state read-only (or synchronise it themselves).
type Workload interface {
	Next(rng *rand.Rand) Request
}

// UserWorkload is a Workload whose users each keep their own place, as a
// Locust user runs its task: a sequence of requests with a pause after
// the last. Each connection is one user and gets its own from NewUser.
type UserWorkload interface {
	Workload
	NewUser(index int) User
}

// User is one connection's requests. In a closed loop the user waits
// Pause (besides any think time) after the answer to the request Next
// gave last, as a wrk script's delay(); an open loop's schedule ignores
// it. Only its own connection calls it.
type User interface {
	Next(rng *rand.Rand) Request
	Pause(rng *rand.Rand) time.Duration
}

// WorkloadFunc adapts a function to Workload.
type WorkloadFunc func(rng *rand.Rand) Request

func (f WorkloadFunc) Next(rng *rand.Rand) Request { return f(rng) }

// requestSource produces the bytes of each request for one connection. raw
// stays valid until the next call, which lets dynamic sources reuse a buffer.
type requestSource interface {
	next(rng *rand.Rand) (raw []byte, label string, err error)
}

type staticSource struct {
	raw   []byte
	label string
}

func (s *staticSource) next(*rand.Rand) ([]byte, string, error) { return s.raw, s.label, nil }

type workloadSource struct {
	w         Workload
	defMethod string
	host      string
	headers   []Header
	closeConn bool
	buf       []byte
	labels    labelCache
}

func (s *workloadSource) next(rng *rand.Rand) ([]byte, string, error) {
	r := s.w.Next(rng)
	method := r.Method
	if method == "" {
		method = s.defMethod
	}
	headers := r.Headers
	if len(headers) == 0 {
		headers = s.headers
	}
	path := r.Path
	if path == "" {
		path = "/"
	}
	s.buf = appendRequest(s.buf[:0], method, path, s.host, headers, r.Body, s.closeConn)
	label := r.Label
	if label == "" {
		label = s.labels.of(s.buf)
	}
	return s.buf, label, nil
}

// labelCache memoises default labels by request line: looking a []byte up
// as a map key does not allocate, deriving the label does.
type labelCache struct{ m map[string]string }

const labelCacheSize = 4096

func (c *labelCache) of(raw []byte) string {
	line := raw
	if i := bytes.IndexByte(raw, '\r'); i >= 0 {
		line = raw[:i]
	}
	if l, ok := c.m[string(line)]; ok {
		return l
	}
	l := labelFromRequest(line)
	if c.m == nil {
		c.m = make(map[string]string)
	}
	if len(c.m) < labelCacheSize {
		c.m[string(line)] = l
	}
	return l
}
