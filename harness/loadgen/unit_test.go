package loadgen

import (
	"bufio"
	"math"
	"strings"
	"testing"
	"time"
)

func TestScheduleInverse(t *testing.T) {
	phases, err := ParsePhases("10s@100, 20s@100->500, 5s@0, 4s@300->0")
	if err != nil {
		t.Fatal(err)
	}
	s := ScheduleOf(phases)
	// 1000 + 20*(100+500)/2 + 0 + 4*300/2
	if got := s.Hits(s.Duration()); math.Abs(got-7600) > 1e-6 {
		t.Fatalf("total hits %v, want 7600", got)
	}
	for _, h := range []float64{0, 1, 999, 1000, 4321.5, 6999, 7000, 7599} {
		at, ok := s.TimeOf(h)
		if !ok {
			t.Fatalf("hit %v not scheduled", h)
		}
		if back := s.Hits(at); math.Abs(back-h) > 0.01 {
			t.Fatalf("Hits(TimeOf(%v)=%v) = %v", h, at, back)
		}
		if h >= 7000 && at < 35*time.Second {
			t.Fatalf("hit %v at %v falls inside the idle pad", h, at)
		}
	}
	if _, ok := s.TimeOf(7600); ok {
		t.Fatal("hit past the end was scheduled")
	}
	if r := s.RateAt(20 * time.Second); math.Abs(r-300) > 1e-6 {
		t.Fatalf("rate mid-ramp %v, want 300", r)
	}
	for _, bad := range []string{"", "10s", "10s@x", "-1s@5", "10s@5->"} {
		if _, err := ParsePhases(bad); err == nil {
			t.Fatalf("ParsePhases(%q) accepted", bad)
		}
	}
}

func TestParseDurationAcceptsWrkForms(t *testing.T) {
	for in, want := range map[string]time.Duration{"10": 10 * time.Second, "2m": 2 * time.Minute, "1h": time.Hour, "1.5s": 1500 * time.Millisecond} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Fatalf("ParseDuration(%q) = %v, %v", in, got, err)
		}
	}
}

func TestReadResponseFraming(t *testing.T) {
	stream := "HTTP/1.1 100 Continue\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n" +
		"HTTP/1.1 204 No Content\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n" + // HEAD: no body follows
		"HTTP/1.0 404 Not Found\r\n\r\ngone"
	br := bufio.NewReaderSize(strings.NewReader(stream), 64) // small, so bodies span refills
	var r response
	type want struct {
		status    int
		head      bool
		body      string
		mustClose bool
	}
	for i, w := range []want{{200, false, "hello", false}, {200, false, "abcde", false}, {204, false, "", false}, {200, true, "", false}, {404, false, "gone", true}} {
		if err := readResponse(br, w.head, true, &r); err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if r.status != w.status || string(r.body) != w.body || r.mustClose != w.mustClose {
			t.Fatalf("response %d: status %d body %q close %v, want %+v", i, r.status, r.body, r.mustClose, w)
		}
	}
	if _, err := br.Peek(1); err == nil {
		t.Fatal("bytes left over after the last response")
	}
	if err := readResponse(bufio.NewReader(strings.NewReader("garbage\r\n\r\n")), false, false, &r); err != errMalformed {
		t.Fatalf("garbage parsed: %v", err)
	}
}

func TestReadResponseCountsBytes(t *testing.T) {
	msg := "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
	var r response
	if err := readResponse(bufio.NewReader(strings.NewReader(msg)), false, false, &r); err != nil {
		t.Fatal(err)
	}
	if r.bytes != int64(len(msg)) || r.bodyBytes != 3 {
		t.Fatalf("bytes %d body %d, want %d 3", r.bytes, r.bodyBytes, len(msg))
	}
}

func TestEndpointLabel(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"GET", "/user/42/posts?x=1"}:                                     "GET /user/{id}/posts",
		{"POST", "http://localhost:8080/wrk2-api/post/compose"}:           "POST /wrk2-api/post/compose",
		{"GET", "/item/550e8400-e29b-41d4-a716-446655440000"}:             "GET /item/{id}",
		{"GET", "/blob/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c"}: "GET /blob/{id}",
		{"GET", "/cafe/beef"}:                                             "GET /cafe/beef",
		{"GET", "http://h"}:                                               "GET /",
	} {
		if got := EndpointLabel(in[0], in[1]); got != want {
			t.Fatalf("EndpointLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRequestFormatting(t *testing.T) {
	got := string(appendRequest(nil, "POST", "/p", "h:1", []Header{{"Content-Length", "99"}, {"X", "y"}}, []byte("abc"), true))
	want := "POST /p HTTP/1.1\r\nX: y\r\nHost: h:1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	rec := newRecorder(10)
	s := &sample{corrected: time.Millisecond, uncorrected: time.Microsecond * 300, status: 200, bytes: 120, label: "GET /"}
	rec.record(s) // creates the endpoint
	msg := "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello"
	rd := strings.NewReader(msg)
	br := bufio.NewReader(rd)
	var r response
	allocs := testing.AllocsPerRun(200, func() {
		rd.Reset(msg)
		br.Reset(rd)
		if err := readResponse(br, false, false, &r); err != nil {
			t.Fatal(err)
		}
		rec.record(s)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per request, want 0", allocs)
	}
}

func TestAccountingBalanceAndText(t *testing.T) {
	a := Accounting{Due: 10, Completed: 5, Errors: 3, HTTPErrors: 2, SocketErrors: 1, Timeouts: 1, Unsent: 1}
	if !a.Balanced() || a.String() != "10 due = 5 completed + 3 errors (2 HTTP status, 1 socket) + 1 timeouts + 1 unsent" {
		t.Fatalf("%v %q", a.Balanced(), a)
	}
	for _, broken := range []Accounting{
		{Due: 11, Completed: 5, Errors: 3, HTTPErrors: 2, SocketErrors: 1, Timeouts: 1, Unsent: 1}, // a request lost
		{Due: 10, Completed: 5, Errors: 3, HTTPErrors: 1, SocketErrors: 1, Timeouts: 1, Unsent: 1}, // errors miscounted
	} {
		if broken.Balanced() || !strings.Contains(broken.String(), " != ") {
			t.Fatalf("%q passes for balanced", broken)
		}
	}
	g := GeneratorStats{LagSamples: 3, LagP99Us: 850, LagMaxUs: 1200, CPUCores: 0.25}
	if got := g.String(); got != "lag p99 0.85ms, max 1.20ms; CPU 0.25 cores" {
		t.Fatalf("%q", got)
	}
	if got := (GeneratorStats{}).String(); got != "no sends; CPU 0.00 cores" {
		t.Fatalf("%q", got)
	}
}
