package loadgen

import (
	"net"
	"strings"
	"testing"
	"time"
)

// The buffer parser must agree with readResponse whatever way the bytes
// are split across reads.
func TestBufParserMatchesReadResponse(t *testing.T) {
	stream := "HTTP/1.1 100 Continue\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n" +
		"HTTP/1.1 204 No Content\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n" + // HEAD: no body follows
		"HTTP/1.1 200 OK\nContent-Length: 2\n\nok" + // bare LF line ends
		"HTTP/1.0 404 Not Found\r\n\r\ngone"
	type want struct {
		status    int
		head      bool
		body      string
		mustClose bool
	}
	wants := []want{{200, false, "hello", false}, {200, false, "abcde", false}, {204, false, "", false}, {200, true, "", false}, {200, false, "ok", false}, {404, false, "gone", true}}
	for _, step := range []int{1, 3, 7, len(stream)} {
		var p bufParser
		var r response
		pending := []byte{}
		rest := stream
		total := int64(0)
		for i, w := range wants {
			p.reset(&r, w.head, true)
			for p.st != psDone {
				if p.st == psUntilEOF && len(pending) == 0 && rest == "" {
					break // EOF ends a close-delimited body
				}
				if len(rest) > 0 {
					n := min(step, len(rest))
					pending, rest = append(pending, rest[:n]...), rest[n:]
				}
				used, err := p.feed(pending, &r)
				if err != nil {
					t.Fatalf("step %d, response %d: %v", step, i, err)
				}
				pending = pending[used:]
			}
			if r.status != w.status || string(r.body) != w.body || r.mustClose != w.mustClose {
				t.Fatalf("step %d, response %d: status %d body %q close %v, want %+v", step, i, r.status, r.body, r.mustClose, w)
			}
			total += r.bytes
		}
		if total != int64(len(stream)) || len(pending) != 0 {
			t.Fatalf("step %d: counted %d of %d bytes, %d left", step, total, len(stream), len(pending))
		}
	}
	var p bufParser
	var r response
	p.reset(&r, false, false)
	if _, err := p.feed([]byte("garbage\r\n\r\n"), &r); err != errMalformed {
		t.Fatalf("garbage parsed: %v", err)
	}
}

// The goroutine engine stays selectable and sends the same schedule.
func TestBothEnginesSendTheScheduledCount(t *testing.T) {
	for _, engine := range []string{EngineGoroutine, EngineLoop} {
		srv := newServer(t, nil)
		res := runLoad(t, Config{URL: srv.URL + "/", Threads: 2, Connections: 4, Rate: 200, Duration: time.Second, Engine: engine})
		if res.Requests < 190 || res.Requests > 200 || res.Errors.Total() != 0 {
			t.Fatalf("%s: %d requests, errors %+v, want ~200 and none", engine, res.Requests, res.Errors)
		}
		if srv.conns.Load() != 4 {
			t.Fatalf("%s: %d connections, want 4", engine, srv.conns.Load())
		}
	}
}

// A server that accepts and never answers: every request must end as a
// timeout, and the run must still end on time.
func TestLoopTimesOutSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	begin := time.Now()
	res := runLoad(t, Config{URL: "http://" + ln.Addr().String() + "/", Threads: 1, Connections: 2, Rate: 20,
		Duration: 1500 * time.Millisecond, Timeout: 300 * time.Millisecond, Engine: EngineLoop})
	if res.Requests != 0 || res.Errors.Timeout == 0 {
		t.Fatalf("requests %d, errors %+v: want timeouts only", res.Requests, res.Errors)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Fatalf("run took %s", took)
	}
	if !strings.Contains(res.String(), "errors") {
		t.Fatal(res.String())
	}
}

// Connections to a closed port fail as connect errors without spinning.
func TestLoopCountsRefusedConnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res := runLoad(t, Config{URL: "http://" + addr + "/", Threads: 1, Connections: 2, Rate: 50, Duration: time.Second, Engine: EngineLoop})
	if res.Requests != 0 || res.Errors.Connect == 0 || res.Errors.Connect > 60 {
		t.Fatalf("requests %d, errors %+v: want ~50 connect errors", res.Requests, res.Errors)
	}
}
