package loadgen

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram ranges follow wrk2 (1 µs .. 24 h, 3 significant digits), so the
// spectrum and its "#[Buckets = 27, SubBuckets = 2048]" footer match a real
// wrk2 report. Per-endpoint histograms use 2 digits: they exist per label and
// per thread, and 1 % resolution is plenty for a breakdown.
const (
	histLowest       = 1
	histHighest      = 24 * 60 * 60 * 1000 * 1000
	histDigits       = 3
	endpointDigits   = 2
	maxStatusTracked = 600
	otherEndpoint    = "(other)"
)

func newLatencyHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// errClass is the fine-grained cause of a failed request. The wrk2-style
// counters (connect/read/write/timeout) are sums of these.
type errClass int

const (
	errConnectRefused errClass = iota
	errConnectTimeout
	errConnectOther
	errReset
	errEOF
	errReadOther
	errWriteOther
	errMalformedResponse
	errTimeout
	// errCancelled is a request in flight when the run was interrupted:
	// cut, not waited for. It counts as a timeout.
	errCancelled
	numErrClasses
)

var errClassNames = [numErrClasses]string{
	"connect_refused", "connect_timeout", "connect_other", "reset", "eof",
	"read_other", "write_other", "malformed_response", "timeout", "cancelled",
}

// timedOut tells Accounting's timeouts from its socket errors.
func (c errClass) timedOut() bool {
	return c == errTimeout || c == errConnectTimeout || c == errCancelled
}

// classify maps a failure to a class. op is the step that failed: "connect",
// "write" or "read".
func classify(op string, err error) errClass {
	var ne net.Error
	timeout := errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
	switch op {
	case "connect":
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return errConnectRefused
		case timeout:
			return errConnectTimeout
		}
		return errConnectOther
	}
	switch {
	case timeout:
		return errTimeout
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		return errReset
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errEOF
	case errors.Is(err, errMalformed):
		return errMalformedResponse
	case op == "write":
		return errWriteOther
	}
	return errReadOther
}

// sample is one finished request as the connection loop reports it.
type sample struct {
	corrected, uncorrected time.Duration
	// lag is the send's delay past the moment it could have gone out.
	lag       time.Duration
	status    int
	bytes     int64
	bodyBytes int64
	label     string
	failed    bool
	class     errClass
	failedOp  string // which wrk2 bucket a failure belongs to
}

// recorder aggregates one phase (warm-up or measured) of one thread. Its
// size is fixed by the histogram ranges, whatever the run length.
type recorder struct {
	corrected, uncorrected *hdr.Histogram
	lag                    *hdr.Histogram // µs, every send
	requests, bytes        int64
	// timeouts and socketErrors split the failures the way Accounting
	// does (wrk's counters put connect timeouts under connect).
	timeouts, socketErrors int64
	respMin, respMax       int64
	status                 [maxStatusTracked]int64
	statusOther            int64
	errs                   [numErrClasses]int64
	wrkErrs                wrkErrors
	endpoints              map[string]*endpointRec
	maxEndpoints           int
	// timeoutUs, when set, is recorded as the latency of a request that
	// timed out (Closed.TimeoutLatency).
	timeoutUs int64
}

type wrkErrors struct{ connect, read, write, timeout, status int64 }

type endpointRec struct {
	count, errors, bytes int64
	completed, bodyBytes int64 // status < 400 only
	// bodySquares sums the squares of those bodies' sizes: with it the
	// responses gate tells a shrunk mean from the spread of sizes an
	// endpoint answers with anyway
	bodySquares float64
	bodyMax     int64
	// openCompleted, openBodyBytes and openBodySquares count the first
	// openingResponses of them (Result.Opening)
	openCompleted, openBodyBytes int64
	openBodySquares              float64
	hist                         *hdr.Histogram
}

// openingResponses is how many completed responses of each endpoint, per
// thread, make its opening: in an iterations run (one user per thread)
// the users' first three passes through the sequence.
const openingResponses = 3

func newRecorder(maxEndpoints int) *recorder {
	return &recorder{
		corrected:    newLatencyHist(),
		uncorrected:  newLatencyHist(),
		lag:          newLagHist(),
		respMin:      -1,
		endpoints:    make(map[string]*endpointRec),
		maxEndpoints: maxEndpoints,
	}
}

func (r *recorder) endpoint(label string) *endpointRec {
	if e, ok := r.endpoints[label]; ok {
		return e
	}
	if len(r.endpoints) >= r.maxEndpoints {
		label = otherEndpoint
		if e, ok := r.endpoints[label]; ok {
			return e
		}
	}
	e := &endpointRec{hist: hdr.New(histLowest, histHighest, endpointDigits)}
	r.endpoints[label] = e
	return e
}

func (r *recorder) record(s *sample) {
	e := r.endpoint(s.label)
	r.lag.RecordValue(lagUs(s.lag))
	if s.failed {
		r.errs[s.class]++
		e.errors++
		if s.class.timedOut() {
			r.timeouts++
			if r.timeoutUs > 0 && s.class == errTimeout {
				r.corrected.RecordValue(clampUs(r.timeoutUs))
				r.uncorrected.RecordValue(clampUs(r.timeoutUs))
				e.hist.RecordValue(clampUs(r.timeoutUs))
			}
		} else {
			r.socketErrors++
		}
		switch {
		case s.class == errTimeout || s.class == errCancelled:
			r.wrkErrs.timeout++
		case s.failedOp == "connect":
			r.wrkErrs.connect++
		case s.failedOp == "write":
			r.wrkErrs.write++
		default:
			r.wrkErrs.read++
		}
		return
	}
	us := s.corrected.Microseconds()
	r.corrected.RecordValue(clampUs(us))
	r.uncorrected.RecordValue(clampUs(s.uncorrected.Microseconds()))
	r.requests++
	r.bytes += s.bytes
	if r.respMin < 0 || s.bytes < r.respMin {
		r.respMin = s.bytes
	}
	if s.bytes > r.respMax {
		r.respMax = s.bytes
	}
	if s.status > 0 && s.status < maxStatusTracked {
		r.status[s.status]++
	} else {
		r.statusOther++
	}
	if s.status > 399 {
		// wrk counts only 4xx/5xx here despite the report's wording.
		r.wrkErrs.status++
		e.errors++
	} else {
		if e.completed < openingResponses {
			e.openCompleted++
			e.openBodyBytes += s.bodyBytes
			e.openBodySquares += float64(s.bodyBytes) * float64(s.bodyBytes)
		}
		e.completed++
		e.bodyBytes += s.bodyBytes
		e.bodySquares += float64(s.bodyBytes) * float64(s.bodyBytes)
		e.bodyMax = max(e.bodyMax, s.bodyBytes)
	}
	e.count++
	e.bytes += s.bytes
	e.hist.RecordValue(clampUs(us))
}

func (r *recorder) merge(o *recorder) {
	r.corrected.Merge(o.corrected)
	r.uncorrected.Merge(o.uncorrected)
	r.lag.Merge(o.lag)
	r.requests += o.requests
	r.timeouts += o.timeouts
	r.socketErrors += o.socketErrors
	r.bytes += o.bytes
	if o.respMin >= 0 && (r.respMin < 0 || o.respMin < r.respMin) {
		r.respMin = o.respMin
	}
	if o.respMax > r.respMax {
		r.respMax = o.respMax
	}
	for i := range r.status {
		r.status[i] += o.status[i]
	}
	r.statusOther += o.statusOther
	for i := range r.errs {
		r.errs[i] += o.errs[i]
	}
	r.wrkErrs.connect += o.wrkErrs.connect
	r.wrkErrs.read += o.wrkErrs.read
	r.wrkErrs.write += o.wrkErrs.write
	r.wrkErrs.timeout += o.wrkErrs.timeout
	r.wrkErrs.status += o.wrkErrs.status
	for label, e := range o.endpoints {
		m, ok := r.endpoints[label]
		if !ok {
			m = &endpointRec{hist: hdr.New(histLowest, histHighest, endpointDigits)}
			r.endpoints[label] = m
		}
		m.count += e.count
		m.errors += e.errors
		m.bytes += e.bytes
		m.completed += e.completed
		m.bodyBytes += e.bodyBytes
		m.bodySquares += e.bodySquares
		m.bodyMax = max(m.bodyMax, e.bodyMax)
		m.openCompleted += e.openCompleted
		m.openBodyBytes += e.openBodyBytes
		m.openBodySquares += e.openBodySquares
		m.hist.Merge(e.hist)
	}
}

// interval accumulates one thread's share of the current per-second bucket.
type interval struct {
	sent, completed, errors, bytes int64
	hist                           *hdr.Histogram
}

func clampUs(us int64) int64 {
	if us < histLowest {
		return histLowest
	}
	if us > histHighest {
		return histHighest
	}
	return us
}

// accounting is the recorded part of Accounting: every request that was
// sent. Due and Unsent come from the connections' schedules.
func (r *recorder) accounting() Accounting {
	a := Accounting{
		Completed:    r.requests - r.wrkErrs.status,
		HTTPErrors:   r.wrkErrs.status,
		SocketErrors: r.socketErrors,
		Timeouts:     r.timeouts,
	}
	a.Errors = a.HTTPErrors + a.SocketErrors
	return a
}
