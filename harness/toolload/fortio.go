package toolload

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"path"
	"strconv"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// Fortio runs `fortio load -qps -1`: study 000's closed loop, every
// connection sending its next request as soon as the last one is answered.
type Fortio struct{}

func init() { register(Fortio{}) }

func (Fortio) Name() string { return "fortio" }

// fortioResolution is the histogram bucket width in seconds: 0.1 ms, so the
// percentiles of sub-millisecond answers are not interpolated inside
// fortio's default 1 ms buckets.
const fortioResolution = "0.0001"

func (Fortio) Files(Request) (map[string]string, error) { return nil, nil }
func (Fortio) ResultFile() string                       { return "result.json" }
func (Fortio) Slack() time.Duration                     { return 0 }

// MaxCores is 0: fortio's connections are goroutines on every core given.
func (Fortio) MaxCores() float64 { return 0 }

func (f Fortio) Command(req Request, _, dir string) (warmup, run []string, err error) {
	if req.Connections < 1 || req.Duration <= 0 {
		return nil, nil, fmt.Errorf("fortio: needs connections >= 1 and a positive duration (got %d, %s)", req.Connections, req.Duration)
	}
	if req.Think > 0 {
		return nil, nil, fmt.Errorf("fortio has no think time (got %s)", req.Think)
	}
	out := path.Join(dir, f.ResultFile())
	common := []string{"load", "-qps", "-1", "-c", strconv.Itoa(req.Connections), "-r", fortioResolution}
	if req.Timeout > 0 {
		common = append(common, "-timeout", req.Timeout.String())
	}
	if req.Warmup > 0 {
		// fortio has no warm-up of its own: a separate, unrecorded run
		warmup = append(append([]string{}, common...), "-t", req.Warmup.String(), req.URL)
	}
	run = append(append([]string{}, common...), "-t", req.Duration.String(), "-json", out, req.URL)
	return warmup, run, nil
}

// fortioResult is the part of fortio's -json output we use (fortio's
// periodic.RunnerResults and fhttp.HTTPRunnerResults).
type fortioResult struct {
	RunType   string
	StartTime time.Time
	// RequestedDuration is -t as a Go duration ("2s").
	RequestedDuration string
	ActualQPS         float64
	ActualDuration    int64 // ns
	NumThreads        int
	Version           string
	URL               string
	HTTPReqTimeOut    int64 // ns
	// DurationHistogram covers every call, failed ones included.
	DurationHistogram *fortioHist
	RetCodes          map[string]int64
	Sizes             *fortioHist
	HeaderSizes       *fortioHist
	IPCountMap        map[string]int64
}

type fortioHist struct {
	Count  int64
	Min    float64
	Max    float64
	Sum    float64
	Avg    float64
	StdDev float64
	Data   []struct {
		Start, End, Percent float64
		Count               int64
	}
	Percentiles []struct{ Percentile, Value float64 }
}

func (Fortio) Parse(out []byte) (*loadgen.Result, error) {
	var f fortioResult
	if err := json.Unmarshal(out, &f); err != nil {
		return nil, fmt.Errorf("fortio result: %w", err)
	}
	switch {
	case f.RunType != "HTTP":
		return nil, fmt.Errorf("fortio result: run type %q, want HTTP", f.RunType)
	case f.DurationHistogram == nil || f.ActualDuration <= 0:
		return nil, fmt.Errorf("fortio result: no duration histogram or no duration")
	case f.StartTime.IsZero():
		return nil, fmt.Errorf("fortio result: no start time")
	}
	res := &loadgen.Result{Schema: loadgen.ResultSchema, Tool: "fortio " + f.Version, StatusCodes: map[int]int64{}}
	res.Start = f.StartTime
	res.DurationSeconds = float64(f.ActualDuration) / 1e9
	res.End = res.Start.Add(time.Duration(f.ActualDuration))
	a := &res.Accounting
	var socket int64
	for code, n := range f.RetCodes {
		c, err := strconv.Atoi(code)
		if err != nil {
			return nil, fmt.Errorf("fortio result: status code %q", code)
		}
		switch {
		case c <= 0: // fortio's -1: the connection failed, or timed out
			socket += n
		case c >= 400:
			a.HTTPErrors += n
			res.StatusCodes[c] += n
		default:
			a.Completed += n
			res.StatusCodes[c] += n
		}
	}
	a.SocketErrors = socket
	a.Errors = a.HTTPErrors + a.SocketErrors
	a.Due = f.DurationHistogram.Count
	var problems []string
	if a.Due != a.Completed+a.Errors {
		problems = append(problems, fmt.Sprintf("%d calls but %d return codes", a.Due, a.Completed+a.Errors))
	}
	var bucketed int64
	for _, b := range f.DurationHistogram.Data {
		bucketed += b.Count
	}
	if bucketed != a.Due {
		problems = append(problems, fmt.Sprintf("%d calls but %d in the histogram's buckets", a.Due, bucketed))
	}
	// fortio cut short (a signal) writes its result all the same, over
	// less time than asked
	if asked, err := time.ParseDuration(f.RequestedDuration); err == nil && time.Duration(f.ActualDuration) < asked {
		res.Interrupted = true
	}
	res.Requests = a.Completed + a.HTTPErrors
	res.AchievedRate = float64(res.Requests) / res.DurationSeconds
	res.Errors = loadgen.ErrorCounts{Read: socket, Status: a.HTTPErrors, Classes: map[string]int64{}}
	if socket > 0 {
		res.Errors.Classes["fortio_socket_error"] = socket
	}
	res.Latency = fortioLatency(f.DurationHistogram)
	res.UncorrectedLatency = res.Latency // a closed loop sends when it means to
	label := "GET " + pathOf(f.URL)
	ep := loadgen.EndpointResult{Label: label, Count: res.Requests, Errors: a.Errors, Completed: a.Completed, Latency: res.Latency}
	if f.Sizes != nil && f.Sizes.Count > 0 {
		res.Bytes = int64(math.Round(f.Sizes.Sum))
		res.ResponseBytes = loadgen.ByteStats{Mean: f.Sizes.Avg, Min: int64(f.Sizes.Min), Max: int64(f.Sizes.Max)}
		ep.Bytes = res.Bytes
		body := f.Sizes.Avg
		if f.HeaderSizes != nil {
			body -= f.HeaderSizes.Avg
		}
		ep.BodyBytes = int64(math.Round(body * float64(a.Completed)))
	}
	res.Endpoints = []loadgen.EndpointResult{ep}
	for addr, n := range f.IPCountMap {
		res.Peers = append(res.Peers, loadgen.Peer{Addr: addr, Connections: n})
	}
	res.Config = loadgen.ConfigEcho{URL: f.URL, Mode: "closed", Threads: f.NumThreads, Connections: f.NumThreads,
		DurationSeconds: res.DurationSeconds, TimeoutSeconds: float64(f.HTTPReqTimeOut) / 1e9, Closed: &loadgen.Closed{Users: f.NumThreads}}
	return res, inconsistent("fortio", problems)
}

func fortioLatency(h *fortioHist) loadgen.LatencySummary {
	us := func(s float64) int64 { return int64(math.Round(s * 1e6)) }
	l := loadgen.LatencySummary{Unit: "us", Count: h.Count, Min: us(h.Min), Max: us(h.Max), Mean: h.Avg * 1e6, StdDev: h.StdDev * 1e6}
	for _, p := range h.Percentiles {
		l.Percentiles = append(l.Percentiles, loadgen.PercentileValue{Percentile: p.Percentile, Value: us(p.Value)})
	}
	l.Percentiles = append(l.Percentiles, loadgen.PercentileValue{Percentile: 100, Value: l.Max})
	var total int64
	for _, b := range h.Data {
		total += b.Count
		l.Spectrum = append(l.Spectrum, loadgen.SpectrumPoint{Value: b.End * 1e6, Percentile: b.Percent / 100, TotalCount: total})
	}
	return l
}

func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.RequestURI()
}
