package loadgen

import (
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// forwarder relays TCP connections to target, as a proxy or a service
// mesh's sidecar would; it counts the connections it accepted.
func forwarder(t *testing.T, target string) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int64)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(out, in); out.Close() }()
			go func() { defer wg.Done(); io.Copy(in, out); in.Close() }()
		}
	}()
	return ln.Addr().String(), accepted
}

// Peers are the addresses the sockets reached: through a forwarder, the
// forwarder's, never the server's behind it.
func TestPeersAreWhatTheSocketsReached(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, nil)
			direct := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: 4, Rate: 100, Duration: 500 * time.Millisecond, Engine: engine})
			onlyPeer(t, direct, hostOf(srv.URL), 4)

			fwd, accepted := forwarder(t, hostOf(srv.URL))
			res := runLoad(t, Config{URL: "http://" + fwd + "/", Threads: 2, Connections: 4, Rate: 100, Duration: 500 * time.Millisecond, Engine: engine})
			checkAccounting(t, res)
			want(t, "completed", res.Accounting.Completed, 50)
			onlyPeer(t, res, fwd, accepted.Load())
			want(t, "forwarded connections", accepted.Load(), 4)
		})
	}
}

// Body bytes count the payload of completed responses only: headers,
// chunk framing and the bodies of 4xx/5xx are excluded.
func TestEndpointBodyBytes(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/empty":
					w.WriteHeader(200)
				case "/hello":
					io.WriteString(w, "hello\n")
				case "/chunked":
					io.WriteString(w, "abc")
					w.(http.Flusher).Flush()
					io.WriteString(w, "defg")
				default:
					w.WriteHeader(404)
					io.WriteString(w, "gone")
				}
			})
			paths := []string{"/empty", "/hello", "/chunked", "/gone"}
			wl := WorkloadFunc(func(rng *rand.Rand) Request { return Request{Path: paths[rng.IntN(len(paths))]} })
			res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 2, Rate: 200, Duration: 500 * time.Millisecond, Workload: wl, Seed: 5, Engine: engine})
			checkAccounting(t, res)
			per := map[string]EndpointResult{}
			for _, e := range res.Endpoints {
				per[e.Label] = e
			}
			for path, size := range map[string]int64{"/empty": 0, "/hello": 6, "/chunked": 7} {
				e := per["GET "+path]
				if e.Completed == 0 || e.Completed != e.Count || e.BodyBytes != size*e.Completed {
					t.Fatalf("%s: %+v, want %d body bytes per completed response", path, e, size)
				}
				if e.Bytes <= e.BodyBytes {
					t.Fatalf("%s: %d bytes with headers, %d of body", path, e.Bytes, e.BodyBytes)
				}
			}
			if gone := per["GET /gone"]; gone.Count == 0 || gone.Completed != 0 || gone.BodyBytes != 0 || gone.Errors != gone.Count {
				t.Fatalf("/gone: %+v, want errors only and no body bytes", gone)
			}
		})
	}
}
