package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// maxFuzzStream keeps each input well under what either engine can buffer
// (readResponse's 16 KiB line buffer, the event loop's 1 MiB line limit):
// past those limits the two legitimately differ, one truncating a long
// line and the other refusing it, and neither is a parsing question.
const maxFuzzStream = 8 << 10

// FuzzResponseParsersAgree feeds one server byte stream, split into reads
// at fuzzer-chosen points, to readResponse (the goroutine engine) and to
// bufParser (the event loop) and requires the same verdict for every
// response on the connection: status, bytes counted, body bytes, whether
// the connection is spent, the captured headers and body, and the error
// class a failed read is recorded under.
func FuzzResponseParsersAgree(f *testing.F) {
	f.Add([]byte(engineTestStream), []byte{0, 2, 6}, 0b01000, true)
	f.Fuzz(func(t *testing.T, stream, splits []byte, heads int, capture bool) {
		if len(stream) > maxFuzzStream {
			t.Skip("longer than the engines' line buffers; see maxFuzzStream")
		}
		viaReader := readAllResponses(stream, splits, heads, capture)
		viaBuffer := feedAllResponses(stream, splits, heads, capture)
		if !viaReader.equal(viaBuffer) {
			t.Fatalf("parsers disagree on %q (splits %v, heads %b, capture %v):\nreadResponse %+v\nbufParser    %+v",
				stream, splits, heads, capture, viaReader, viaBuffer)
		}
		var counted int64
		for _, r := range viaReader.responses {
			if r.bodyBytes > r.bytes || (capture && int64(len(r.body)) != r.bodyBytes) {
				t.Fatalf("response %+v: body bytes do not add up", r)
			}
			counted += r.bytes
		}
		if counted > int64(len(stream)) {
			t.Fatalf("counted %d bytes of a %d-byte stream", counted, len(stream))
		}
	})
}

// engineTestStream is TestBufParserMatchesReadResponse's connection: every
// framing both parsers know, one after the other.
const engineTestStream = "HTTP/1.1 100 Continue\r\n\r\n" +
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" +
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n" +
	"HTTP/1.1 204 No Content\r\n\r\n" +
	"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n" +
	"HTTP/1.1 200 OK\nContent-Length: 2\n\nok" +
	"HTTP/1.0 404 Not Found\r\n\r\ngone"

// parsedResponse is what the engines record of one response.
type parsedResponse struct {
	status           int
	bytes, bodyBytes int64
	mustClose        bool
	headers          []Header
	body             string
}

// connOutcome is a connection's responses and how it ended: closed between
// responses (or after one that spends the connection), or failed with the
// class the failed read is recorded under.
type connOutcome struct {
	responses []parsedResponse
	failed    bool
	class     errClass
}

// failedWith ends the outcome with the class err is recorded under.
func (o connOutcome) failedWith(err error) connOutcome {
	o.failed, o.class = true, classify("read", err)
	return o
}

func (a connOutcome) equal(b connOutcome) bool {
	return a.failed == b.failed && a.class == b.class && slices.EqualFunc(a.responses, b.responses, func(x, y parsedResponse) bool {
		return x.status == y.status && x.bytes == y.bytes && x.bodyBytes == y.bodyBytes &&
			x.mustClose == y.mustClose && x.body == y.body && slices.Equal(x.headers, y.headers)
	})
}

func recordOf(r *response) parsedResponse {
	return parsedResponse{status: r.status, bytes: r.bytes, bodyBytes: r.bodyBytes, mustClose: r.mustClose,
		headers: slices.Clone(r.headers), body: string(r.body)}
}

// isHead says whether the i-th request on the connection was a HEAD.
func isHead(heads, i int) bool { return heads>>(i%16)&1 == 1 }

// splitReader hands out its data in reads of the sizes splits cycles
// through (a size byte n means n+1 bytes), as a socket would.
type splitReader struct {
	data   []byte
	splits []byte
	k      int
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := len(s.data)
	if len(s.splits) > 0 {
		n = min(n, int(s.splits[s.k%len(s.splits)])+1)
		s.k++
	}
	n = copy(p, s.data[:n])
	s.data = s.data[n:]
	return n, nil
}

// readAllResponses is the goroutine engine's view of the connection.
func readAllResponses(stream, splits []byte, heads int, capture bool) connOutcome {
	// The buffer holds the longest line, so readLine never truncates.
	size := 16
	for _, line := range bytes.SplitAfter(stream, []byte("\n")) {
		size = max(size, len(line)+1)
	}
	br := bufio.NewReaderSize(&splitReader{data: stream, splits: splits}, size)
	var out connOutcome
	var r response
	for i := 0; ; i++ {
		err := readResponse(br, isHead(heads, i), capture, &r)
		if errors.Is(err, io.EOF) && r.bytes == 0 {
			return out
		}
		if err != nil {
			return out.failedWith(err)
		}
		out.responses = append(out.responses, recordOf(&r))
		if r.mustClose {
			return out
		}
	}
}

// feedAllResponses is the event loop's view: each read appends to what is
// left of the buffer, and the parser is fed the lot.
func feedAllResponses(stream, splits []byte, heads int, capture bool) connOutcome {
	src := &splitReader{data: stream, splits: splits}
	chunk := make([]byte, len(stream)+1)
	var pending []byte
	var out connOutcome
	var p bufParser
	var r response
	for i := 0; ; i++ {
		p.reset(&r, isHead(heads, i), capture)
		for p.st != psDone {
			used, err := p.feed(pending, &r)
			pending = pending[used:]
			if err != nil {
				return out.failedWith(err)
			}
			if p.st == psDone {
				break
			}
			n, _ := src.Read(chunk)
			if n > 0 {
				pending = append(pending, chunk[:n]...)
				continue
			}
			// The server closed: that ends a close-delimited body and is
			// clean between responses; anything else was cut short.
			if p.st == psUntilEOF {
				out.responses = append(out.responses, recordOf(&r))
				return out
			}
			if r.bytes > 0 || len(pending) > 0 {
				return out.failedWith(io.ErrUnexpectedEOF)
			}
			return out
		}
		out.responses = append(out.responses, recordOf(&r))
		if r.mustClose {
			return out
		}
	}
}
