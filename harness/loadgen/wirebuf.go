package loadgen

import "bytes"

// bufParser reads one HTTP/1.1 response out of bytes as they arrive on a
// non-blocking socket: the event loop cannot block inside a read the way
// readResponse does, so the parser keeps its place between reads. It takes
// the head a line at a time, as readResponse does, and shares its line
// parsers, so both engines count and classify the same bytes the same way:
// a bad status or header line is malformed as soon as it is complete, not
// an early end of the stream when the server then closes.
type bufParser struct {
	st     parseState
	remain int64 // body or chunk bytes still to come
	head   bool  // the request was HEAD: no body whatever the headers say
	cap    bool  // keep headers and body for a Lua response() hook
}

type parseState uint8

const (
	psStatus parseState = iota
	psHeader
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
// response is complete once p.st is psDone. A line that does not end in buf
// is left unconsumed: the caller grows the buffer or gives up.
func (p *bufParser) feed(buf []byte, r *response) (int, error) {
	used := 0
	for used < len(buf) && p.st != psDone {
		rest := buf[used:]
		switch p.st {
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
		default: // the head and the chunk framing are lines
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				return used, nil
			}
			r.bytes += int64(i + 1)
			used += i + 1
			if err := p.line(trimCR(rest[:i]), r); err != nil {
				return used, err
			}
		}
	}
	return used, nil
}

// line handles one complete line, its terminator already removed.
func (p *bufParser) line(line []byte, r *response) error {
	switch p.st {
	case psStatus:
		if err := parseStatusLine(line, r); err != nil {
			return err
		}
		p.st = psHeader
	case psHeader:
		if len(line) == 0 {
			p.endHead(r)
			return nil
		}
		return parseHeaderLine(line, p.cap, r)
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

// endHead picks how the body is framed once the blank line ends the head.
func (p *bufParser) endHead(r *response) {
	switch {
	case r.status < 200 && r.status != 101:
		// interim response: the real one follows
		r.headers = r.headers[:0]
		p.st = psStatus
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
}
