package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errMalformed marks a response the minimal parser could not read; the
// connection is then out of sync and must be replaced.
var errMalformed = errors.New("malformed HTTP response")

// response is what the parser hands back. Headers and body are filled only
// when capture is on (a Lua response() hook wants them), so the common path
// stays allocation-free.
type response struct {
	status    int
	bytes     int64 // everything consumed from the socket for this response
	bodyBytes int64
	mustClose bool
	headers   []Header
	body      []byte

	contentLength int64
	chunked       bool
}

// readResponse parses one HTTP/1.1 response from br. It handles what servers
// in the testbed send: Content-Length, chunked and close-delimited bodies,
// bodiless statuses, and interim 1xx responses (skipped).
func readResponse(br *bufio.Reader, head, capture bool, r *response) error {
	*r = response{headers: r.headers[:0], body: r.body[:0]}
	for {
		if err := readHead(br, capture, r); err != nil {
			return err
		}
		if r.status >= 200 || r.status == 101 {
			break
		}
		r.headers = r.headers[:0]
	}
	if head || r.status == 204 || r.status == 304 || r.status == 101 {
		return nil
	}
	switch {
	case r.chunked:
		return readChunked(br, capture, r)
	case r.contentLength >= 0:
		return consume(br, r.contentLength, capture, r)
	default:
		// No length: the body runs to EOF and the connection is spent.
		r.mustClose = true
		for {
			if err := consumeSome(br, capture, r); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
}

func readHead(br *bufio.Reader, capture bool, r *response) error {
	line, err := readLine(br, &r.bytes)
	if err != nil {
		return err
	}
	if err := parseStatusLine(line, r); err != nil {
		return err
	}
	for {
		line, err = readLine(br, &r.bytes)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
		if err := parseHeaderLine(line, capture, r); err != nil {
			return err
		}
	}
}

// parseStatusLine reads "HTTP/1.x SSS reason" and resets the framing
// fields for the headers that follow.
func parseStatusLine(line []byte, r *response) error {
	r.contentLength, r.chunked = -1, false
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return errMalformed
	}
	status := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return errMalformed
		}
		status = status*10 + int(c-'0')
	}
	r.status = status
	r.mustClose = line[7] == '0' // HTTP/1.0 closes unless told otherwise
	return nil
}

func parseHeaderLine(line []byte, capture bool, r *response) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return errMalformed
	}
	name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch {
	case asciiEqualFold(name, "content-length"):
		n, ok := parseDecimal(value)
		if !ok {
			return errMalformed
		}
		r.contentLength = n
	case asciiEqualFold(name, "transfer-encoding"):
		r.chunked = containsFold(value, "chunked")
	case asciiEqualFold(name, "connection"):
		if containsFold(value, "close") {
			r.mustClose = true
		} else if containsFold(value, "keep-alive") {
			r.mustClose = false
		}
	}
	if capture {
		r.headers = append(r.headers, Header{Name: string(name), Value: string(value)})
	}
	return nil
}

// readLine returns one CRLF- or LF-terminated line without its terminator.
// Lines longer than the buffer are consumed and truncated rather than
// failing: only the start of a line ever matters to the parser.
func readLine(br *bufio.Reader, n *int64) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	*n += int64(len(line))
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull {
			var more []byte
			more, err = br.ReadSlice('\n')
			*n += int64(len(more))
		}
		// The first part was overwritten by the later reads; a truncated
		// header is of no use, so report the line as empty-but-nonterminal.
		line = []byte("x-truncated: 1")
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return trimCR(line[:len(line)-1]), nil
}

// trimCR drops the one CR of a CRLF line end. Both parsers cut lines with
// it: a second CR is part of the line, so "\r\r\n" is not a blank line.
func trimCR(line []byte) []byte {
	if len(line) > 0 && line[len(line)-1] == '\r' {
		return line[:len(line)-1]
	}
	return line
}

func readChunked(br *bufio.Reader, capture bool, r *response) error {
	for {
		line, err := readLine(br, &r.bytes)
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, ok := parseHex(bytes.TrimSpace(line))
		if !ok {
			return errMalformed
		}
		if size == 0 {
			// Trailers end with an empty line.
			for {
				line, err = readLine(br, &r.bytes)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					return nil
				}
			}
		}
		if err := consume(br, size, capture, r); err != nil {
			return err
		}
		if _, err := readLine(br, &r.bytes); err != nil {
			return err
		}
	}
}

func consume(br *bufio.Reader, n int64, capture bool, r *response) error {
	if !capture {
		for n > 0 {
			step := n
			if step > 1<<30 {
				step = 1 << 30
			}
			d, err := br.Discard(int(step))
			r.bytes += int64(d)
			r.bodyBytes += int64(d)
			n -= int64(d)
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
		}
		return nil
	}
	for n > 0 {
		buf, err := br.Peek(1)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		take := int64(br.Buffered())
		if take > n {
			take = n
		}
		buf, _ = br.Peek(int(take))
		r.body = append(r.body, buf...)
		br.Discard(int(take))
		r.bytes += take
		r.bodyBytes += take
		n -= take
	}
	return nil
}

func consumeSome(br *bufio.Reader, capture bool, r *response) error {
	if _, err := br.Peek(1); err != nil {
		return err
	}
	n := int64(br.Buffered())
	return consume(br, n, capture, r)
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func containsFold(b []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(b); i++ {
		if asciiEqualFold(b[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(v)
	}
	return n, true
}
