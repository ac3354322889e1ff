package loadgen

import (
	"fmt"
	"math"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ResultSchema is bumped whenever a field of Result changes meaning, so
// archived results can be read back correctly.
const ResultSchema = 2

// Result is everything one run measured. It is the archive format of the
// harness: JSON-tagged, self-describing, and with histograms encoded so they
// can be decoded and merged again later.
type Result struct {
	Schema int        `json:"schema"`
	Tool   string     `json:"tool"`
	Config ConfigEcho `json:"config"`
	Start  time.Time  `json:"start"` // start of the measured period (after warm-up)
	End    time.Time  `json:"end"`
	// DurationSeconds is the measured period: the schedule's length in open
	// loop, the time until the last user stopped in closed loop; an
	// interrupted run's ends at the interruption. The wait for requests
	// still in flight at its end is not part of it (see WallSeconds).
	DurationSeconds float64 `json:"duration_seconds"`
	// OfferedRate is the schedule's mean rate over the measured period
	// (0 in closed loop, where nothing is offered independently of replies).
	OfferedRate float64 `json:"offered_rps"`
	// DueRate counts the requests actually scheduled in the measured window
	// per second (Accounting.Due / DurationSeconds): equal to OfferedRate
	// for fixed arrivals, random around it for exp arrivals. Saturation
	// shows as AchievedRate below DueRate.
	DueRate      float64 `json:"due_rps,omitempty"`
	AchievedRate float64 `json:"achieved_rps"`
	Requests     int64   `json:"requests"` // completed responses, any status
	Bytes        int64   `json:"bytes"`    // response bytes read

	Latency            LatencySummary `json:"latency"`             // from scheduled send time
	UncorrectedLatency LatencySummary `json:"uncorrected_latency"` // from actual send time

	Errors        ErrorCounts      `json:"errors"`
	StatusCodes   map[int]int64    `json:"status_codes"`
	ResponseBytes ByteStats        `json:"response_bytes"`
	Endpoints     []EndpointResult `json:"endpoints"`
	Series        []SeriesPoint    `json:"series"`
	Warmup        *WarmupSummary   `json:"warmup,omitempty"`
	// Opening is each endpoint's first responses of the measured window,
	// the reference a run without warm-up holds later responses to.
	Opening []EndpointBodies `json:"opening,omitempty"`

	// Accounting puts every request due in the measured window in exactly
	// one bucket (completed, errors, timeouts, unsent).
	Accounting Accounting `json:"accounting"`
	// Generator is the generator's own lag and CPU.
	Generator GeneratorStats `json:"generator"`
	// Peers are the remote addresses the connections reached (getpeername).
	Peers []Peer `json:"peers"`
	// WallSeconds is the time from the start of the measured window until
	// the generator stopped, the wait for in-flight requests included.
	WallSeconds float64 `json:"wall_seconds"`
	// Interrupted is true when the run was stopped (signal, cancellation)
	// before the generator was done: the result is partial (see Accounting
	// for how the cut requests are counted).
	Interrupted bool `json:"interrupted,omitempty"`
}

// ConfigEcho repeats the run's settings so an archived result explains itself.
type ConfigEcho struct {
	URL             string   `json:"url"`
	Hosts           []string `json:"hosts,omitempty"`
	Mode            string   `json:"mode"` // "open" or "closed"
	Threads         int      `json:"threads"`
	Connections     int      `json:"connections"`
	DurationSeconds float64  `json:"duration_seconds"`
	Rate            float64  `json:"rate,omitempty"`
	Phases          []Phase  `json:"phases,omitempty"`
	Distribution    string   `json:"distribution,omitempty"`
	WarmupSeconds   float64  `json:"warmup_seconds"`
	TimeoutSeconds  float64  `json:"timeout_seconds"`
	Headers         []Header `json:"headers,omitempty"`
	Script          string   `json:"script,omitempty"`
	ScriptArgs      []string `json:"script_args,omitempty"`
	Workload        string   `json:"workload,omitempty"`
	ConnectionClose bool     `json:"connection_close"`
	Closed          *Closed  `json:"closed,omitempty"`
	// Engine and Procs (GOMAXPROCS) say how the load was generated: they
	// change the generator's own cost per request.
	Engine string `json:"engine,omitempty"`
	Procs  int    `json:"procs,omitempty"`
}

// LatencySummary is one latency distribution in microseconds.
type LatencySummary struct {
	Unit        string            `json:"unit"` // always "us"
	Count       int64             `json:"count"`
	Min         int64             `json:"min"`
	Max         int64             `json:"max"`
	Mean        float64           `json:"mean"`
	StdDev      float64           `json:"stddev"`
	Percentiles []PercentileValue `json:"percentiles"` // wrk2's 50 … 100 lines
	Spectrum    []SpectrumPoint   `json:"spectrum"`    // wrk2's detailed spectrum
	Buckets     int               `json:"buckets"`
	SubBuckets  int               `json:"sub_buckets"`
	// Histogram is the HdrHistogram V2 compressed, base64 encoding (the
	// format of HdrHistogram's log files); see Decode.
	Histogram string `json:"histogram"`
}

// PercentileValue is one "99.000%  1.23ms" line.
type PercentileValue struct {
	Percentile float64 `json:"percentile"`
	Value      int64   `json:"value"`
}

// SpectrumPoint is one row of the detailed percentile spectrum.
type SpectrumPoint struct {
	Value      float64 `json:"value"` // microseconds (wrk2 prints milliseconds)
	Percentile float64 `json:"percentile"`
	TotalCount int64   `json:"total_count"`
}

// Decode restores the histogram for merging or custom percentiles.
func (l LatencySummary) Decode() (*hdr.Histogram, error) {
	if l.Histogram == "" {
		return nil, fmt.Errorf("no encoded histogram")
	}
	return hdr.Decode([]byte(l.Histogram))
}

// ErrorCounts has wrk2's socket-error counters plus finer classes.
type ErrorCounts struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Timeout int64 `json:"timeout"`
	// Status counts 4xx and 5xx responses, which wrk2 reports as
	// "Non-2xx or 3xx responses".
	Status  int64            `json:"status"`
	Classes map[string]int64 `json:"classes"`
}

// Total is the number of failed requests (socket errors, not statuses).
func (e ErrorCounts) Total() int64 { return e.Connect + e.Read + e.Write + e.Timeout }

// ByteStats describes response sizes in bytes (headers included).
type ByteStats struct {
	Mean float64 `json:"mean"`
	Min  int64   `json:"min"`
	Max  int64   `json:"max"`
}

// EndpointResult is one row of the per-endpoint breakdown.
type EndpointResult struct {
	Label  string `json:"label"`
	Count  int64  `json:"count"`  // completed responses
	Errors int64  `json:"errors"` // socket errors and 4xx/5xx
	Bytes  int64  `json:"bytes"`
	// Completed counts the responses with a status below 400, and
	// BodyBytes their body bytes (headers excluded): what the responses
	// gate compares with the probe's body.
	Completed int64 `json:"completed"`
	BodyBytes int64 `json:"body_bytes"`
	// BodySquares sums the squared body sizes; 0 from a generator that
	// does not count them (then the spread is unknown)
	BodySquares float64 `json:"body_squares,omitempty"`
	// BodyMax is the largest body, counted with BodySquares
	BodyMax int64          `json:"body_max,omitempty"`
	Latency LatencySummary `json:"latency"` // corrected, 2 significant digits
}

// SeriesPoint is one interval of the per-second series. T is the interval's
// start relative to the end of warm-up (negative during warm-up).
type SeriesPoint struct {
	T           float64 `json:"t"`
	Seconds     float64 `json:"seconds"`
	Warmup      bool    `json:"warmup,omitempty"`
	OfferedRate float64 `json:"offered_rps"`
	// DueRate counts the requests actually scheduled in the measured window
	// per second: equal to OfferedRate for fixed arrivals, random around it
	// for exp arrivals. Saturation shows as AchievedRate below DueRate.
	DueRate      float64 `json:"due_rps,omitempty"`
	AchievedRate float64 `json:"achieved_rps"`
	Errors       int64   `json:"errors"`
	Bytes        int64   `json:"bytes"`
	P50          int64   `json:"p50_us"`
	P99          int64   `json:"p99_us"`
}

// WarmupSummary is what happened before measurement; it is kept apart so the
// measured figures are clean, but stays visible for sanity checks.
type WarmupSummary struct {
	DurationSeconds float64     `json:"duration_seconds"`
	OfferedRate     float64     `json:"offered_rps"`
	AchievedRate    float64     `json:"achieved_rps"`
	Requests        int64       `json:"requests"`
	Errors          ErrorCounts `json:"errors"`
	P50             int64       `json:"p50_us"`
	P99             int64       `json:"p99_us"`
	Max             int64       `json:"max_us"`
	// Endpoints are the warm-up's body sizes per endpoint: the responses
	// gate holds the measured ones to them.
	Endpoints []EndpointBodies `json:"endpoints,omitempty"`
}

// EndpointBodies counts one endpoint's completed responses (status below
// 400) and their body bytes, headers excluded.
type EndpointBodies struct {
	Label     string `json:"label"`
	Completed int64  `json:"completed"`
	BodyBytes int64  `json:"body_bytes"`
	// BodySquares sums the squared body sizes; 0 when not counted
	BodySquares float64 `json:"body_squares,omitempty"`
}

// MeanBody is the mean body of the completed responses; ok is false when
// none completed.
func (e EndpointBodies) MeanBody() (mean float64, ok bool) {
	if e.Completed == 0 {
		return 0, false
	}
	return float64(e.BodyBytes) / float64(e.Completed), true
}

// BodyVariance is the variance of the completed responses' body sizes;
// ok is false when none completed or the generator did not count their
// squares (bodies of some bytes with no squares summed).
func (e EndpointBodies) BodyVariance() (variance float64, ok bool) {
	mean, ok := e.MeanBody()
	if !ok || (e.BodySquares == 0 && e.BodyBytes > 0) {
		return 0, false
	}
	return max(0, e.BodySquares/float64(e.Completed)-mean*mean), true
}

var wrk2Percentiles = []float64{50, 75, 90, 99, 99.9, 99.99, 99.999, 100}

// Summarize turns a histogram into a LatencySummary.
func Summarize(h *hdr.Histogram) LatencySummary {
	s := LatencySummary{Unit: "us", Count: h.TotalCount()}
	s.Buckets, s.SubBuckets = bucketLayout(h)
	if enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		s.Histogram = string(enc)
	}
	if s.Count == 0 {
		return s
	}
	s.Min, s.Max, s.Mean, s.StdDev = h.Min(), h.Max(), h.Mean(), h.StdDev()
	for _, p := range wrk2Percentiles {
		s.Percentiles = append(s.Percentiles, PercentileValue{Percentile: p, Value: h.ValueAtPercentile(p)})
	}
	// wrk2 prints the spectrum with 5 ticks per half distance.
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		s.Spectrum = append(s.Spectrum, SpectrumPoint{Value: float64(b.ValueAt), Percentile: b.Quantile / 100, TotalCount: b.Count})
	}
	return s
}

// bucketLayout recomputes the histogram's bucket counts, which the library
// keeps private but wrk2's spectrum footer prints.
func bucketLayout(h *hdr.Histogram) (buckets, subBuckets int) {
	single := 2 * math.Pow10(int(h.SignificantFigures()))
	subBuckets = 1 << int(math.Ceil(math.Log2(single)))
	unitMagnitude := int(math.Floor(math.Log2(float64(h.LowestTrackableValue()))))
	smallestUntrackable := int64(subBuckets) << unitMagnitude
	buckets = 1
	for smallestUntrackable <= h.HighestTrackableValue() {
		if smallestUntrackable > math.MaxInt64/2 {
			buckets++
			break
		}
		smallestUntrackable <<= 1
		buckets++
	}
	return buckets, subBuckets
}

func (r *recorder) errorCounts() ErrorCounts {
	e := ErrorCounts{
		Connect: r.wrkErrs.connect, Read: r.wrkErrs.read, Write: r.wrkErrs.write,
		Timeout: r.wrkErrs.timeout, Status: r.wrkErrs.status,
		Classes: make(map[string]int64),
	}
	for i, n := range r.errs {
		if n > 0 {
			e.Classes[errClassNames[i]] = n
		}
	}
	return e
}

// fill copies the aggregated recorder into the result.
func (r *recorder) fill(res *Result) {
	res.Requests, res.Bytes = r.requests, r.bytes
	res.Latency = Summarize(r.corrected)
	res.UncorrectedLatency = Summarize(r.uncorrected)
	res.Errors = r.errorCounts()
	res.StatusCodes = make(map[int]int64)
	for code, n := range r.status {
		if n > 0 {
			res.StatusCodes[code] = n
		}
	}
	if r.statusOther > 0 {
		res.StatusCodes[0] = r.statusOther
	}
	if r.requests > 0 {
		res.ResponseBytes = ByteStats{Mean: float64(r.bytes) / float64(r.requests), Min: r.respMin, Max: r.respMax}
	}
	labels := make([]string, 0, len(r.endpoints))
	for l := range r.endpoints {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	res.Endpoints = []EndpointResult{}
	for _, l := range labels {
		e := r.endpoints[l]
		res.Endpoints = append(res.Endpoints, EndpointResult{Label: l, Count: e.count, Errors: e.errors, Bytes: e.bytes,
			Completed: e.completed, BodyBytes: e.bodyBytes, BodySquares: e.bodySquares, BodyMax: e.bodyMax, Latency: Summarize(e.hist)})
	}
	res.Opening = r.bodies(func(e *endpointRec) EndpointBodies {
		return EndpointBodies{Completed: e.openCompleted, BodyBytes: e.openBodyBytes, BodySquares: e.openBodySquares}
	})
}

// bodies lists every endpoint's body counts, as pick reads them, by label.
func (r *recorder) bodies(pick func(*endpointRec) EndpointBodies) []EndpointBodies {
	labels := make([]string, 0, len(r.endpoints))
	for l := range r.endpoints {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	var out []EndpointBodies
	for _, l := range labels {
		b := pick(r.endpoints[l])
		b.Label = l
		out = append(out, b)
	}
	return out
}

func sortedCodes(m map[int]int64) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
