package loadgen

import "testing"

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

// Streams on which the two parsers once disagreed (seen in review; each is
// a seed of FuzzResponseParsersAgree too); each must now give the verdict
// readResponse always gave.
func TestParsersAgreeWhereTheyOnceDiffered(t *testing.T) {
	for name, c := range map[string]struct {
		stream  string
		status  int // of the one response read; 0 for none
		failed  bool
		class   errClass
		capture bool
	}{
		// The old head scan took "\r\r\n" for the blank line and then read
		// the body to EOF; it is a header line without a colon.
		"CR CR LF in the head": {stream: "HTTP/1.1 200 OK\r\n\r\r\nContent-Length: 2\r\n\r\nok", failed: true, class: errMalformedResponse},
		// ... and ended the trailers there, leaving "\r\n" as the start of
		// a next response that never came.
		"CR CR LF in the trailers": {stream: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\r\n\r\n", status: 200},
		// A bad status line used to wait for a blank line and end as EOF.
		"bad status line, then close": {stream: "garbage\r\n", failed: true, class: errMalformedResponse},
		"bad header line, then close": {stream: "HTTP/1.1 200 OK\r\nno colon\r\n", failed: true, class: errMalformedResponse},
		// An empty status line used to pass as an interim response.
		"empty status line": {stream: "\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", failed: true, class: errMalformedResponse, capture: true},
	} {
		for _, splits := range [][]byte{nil, {0}, {2, 5}} {
			want := connOutcome{failed: c.failed, class: c.class}
			got := feedAllResponses([]byte(c.stream), splits, 0, c.capture)
			if !got.equal(readAllResponses([]byte(c.stream), splits, 0, c.capture)) {
				t.Fatalf("%s, splits %v: parsers disagree", name, splits)
			}
			if got.failed != want.failed || got.class != want.class || (c.status == 0) != (len(got.responses) == 0) {
				t.Fatalf("%s, splits %v: got %+v", name, splits, got)
			}
			if c.status != 0 && (len(got.responses) != 1 || got.responses[0].status != c.status || got.responses[0].bytes != int64(len(c.stream))) {
				t.Fatalf("%s, splits %v: got %+v, want one %d response of all %d bytes", name, splits, got.responses, c.status, len(c.stream))
			}
		}
	}
}
