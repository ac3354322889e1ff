package loadgen

import "bytes"

// bufParser reads one HTTP/1.1 response out of bytes as they arrive on a
// non-blocking socket: the event loop cannot block inside a read the way
// readResponse does, so the parser keeps its place between reads. Framing
// and header handling are readResponse's (shared line parsers), so both
// engines count and classify the same way.
type bufParser struct {
	st     parseState
	remain int64 // body or chunk bytes still to come
	head   bool  // the request was HEAD: no body whatever the headers say
	cap    bool  // keep headers and body for a Lua response() hook
}

type parseState uint8

const (
	psHead parseState = iota
	psBody
	psChunkSize
	psChunkData
	psChunkEnd
	psTrailer
	psUntilEOF
	psDone
)

func (p *bufParser) reset(r *response, head, capture bool) {
	*p = bufParser{head: head, cap: capture}
	*r = response{headers: r.headers[:0], body: r.body[:0]}
}

// feed consumes what it can of buf and returns how many bytes it used; the
// response is complete once p.st is psDone. A head that does not fit in buf
// is left unconsumed: the caller grows the buffer or gives up.
func (p *bufParser) feed(buf []byte, r *response) (int, error) {
	used := 0
	for used < len(buf) && p.st != psDone {
		rest := buf[used:]
		switch p.st {
		case psHead:
			n := headEnd(rest)
			if n < 0 {
				return used, nil
			}
			if err := p.parseHead(rest[:n], r); err != nil {
				return used, err
			}
			r.bytes += int64(n)
			used += n
		case psBody, psChunkData, psUntilEOF:
			take := int64(len(rest))
			if p.st != psUntilEOF && take > p.remain {
				take = p.remain
			}
			if p.cap {
				r.body = append(r.body, rest[:take]...)
			}
			r.bytes += take
			r.bodyBytes += take
			used += int(take)
			p.remain -= take
			if p.remain == 0 {
				switch p.st {
				case psBody:
					p.st = psDone
				case psChunkData:
					p.st = psChunkEnd
				}
			}
		default: // line-based chunk framing
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				return used, nil
			}
			line := bytes.TrimRight(rest[:i], "\r")
			r.bytes += int64(i + 1)
			used += i + 1
			if err := p.chunkLine(line); err != nil {
				return used, err
			}
		}
	}
	return used, nil
}

func (p *bufParser) chunkLine(line []byte) error {
	switch p.st {
	case psChunkSize:
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, ok := parseHex(bytes.TrimSpace(line))
		if !ok {
			return errMalformed
		}
		if size == 0 {
			p.st = psTrailer
		} else {
			p.st, p.remain = psChunkData, size
		}
	case psChunkEnd:
		p.st = psChunkSize
	case psTrailer:
		if len(line) == 0 {
			p.st = psDone
		}
	}
	return nil
}

// headEnd is the length of the head (status line to blank line) at the
// start of b, or -1 if b does not hold all of it yet.
func headEnd(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		if i < len(b) && b[i] == '\n' {
			return i + 1
		}
		if i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
			return i + 2
		}
		if i >= len(b) {
			return -1
		}
	}
}

func (p *bufParser) parseHead(head []byte, r *response) error {
	first := true
	for len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		line := bytes.TrimRight(head[:i], "\r")
		head = head[i+1:]
		if len(line) == 0 {
			break
		}
		var err error
		if first {
			err, first = parseStatusLine(line, r), false
		} else {
			err = parseHeaderLine(line, p.cap, r)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case r.status < 200 && r.status != 101:
		r.headers = r.headers[:0] // interim response: the real one follows
	case p.head || r.status == 204 || r.status == 304 || r.status == 101:
		p.st = psDone
	case r.chunked:
		p.st = psChunkSize
	case r.contentLength == 0:
		p.st = psDone
	case r.contentLength > 0:
		p.st, p.remain = psBody, r.contentLength
	default:
		p.st, r.mustClose = psUntilEOF, true
	}
	return nil
}
