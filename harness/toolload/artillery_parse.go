package toolload

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// artilleryReport is the part of `artillery run --output`'s JSON we read:
// the aggregate's counters and the processor's record.
type artilleryReport struct {
	Aggregate *struct {
		Counters map[string]int64 `json:"counters"`
		// LastMetricAt is when its last metric (a response, a failure)
		// was counted, in ms since the epoch.
		LastMetricAt int64            `json:"lastMetricAt"`
		Orchbench    *artilleryRecord `json:"orchbench"`
	} `json:"aggregate"`
}

// artilleryTimeouts are the error codes Artillery counts for a request
// that outlived config.http.timeout.
var artilleryTimeouts = map[string]bool{"ETIMEDOUT": true, "ESOCKETTIMEDOUT": true}

// artilleryOverrun is how far past what the phases offer Artillery may
// count arrivals: it rounds each worker's arrivals per second of a ramp.
func artilleryOverrun(due float64) float64 { return 2 + 0.02*due }

// Parse reads the report into the common result. The latency histogram is
// the processor's (exact to 3 significant digits, from before a virtual
// user's request to its whole response), not Artillery's percentiles; the
// window is the phases as they ran, pads included; due is the declared
// phases' integral (or what Artillery created, if more). Artillery corrects
// nothing for coordinated omission (each arrival is a new user, but a late
// timer is not seen), so corrected and uncorrected latency are the same.
func (Artillery) Parse(out []byte) (*loadgen.Result, error) {
	var rep artilleryReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("artillery result: %w", err)
	}
	if rep.Aggregate == nil || rep.Aggregate.Counters == nil {
		return nil, fmt.Errorf("artillery result: no aggregate counters")
	}
	rec := rep.Aggregate.Orchbench
	if rec == nil || rec.LatencyUs == nil || len(rec.Declared) == 0 {
		return nil, fmt.Errorf("artillery result: no orchbench record in its aggregate (the generated processor's before hook did not run in Artillery's main thread)")
	}
	c := rep.Aggregate.Counters
	var problems []string
	start, end, err := artilleryWindow(rec, &problems)
	if err != nil {
		return nil, err
	}
	// Every request ends within the timeout of its sending: a later one
	// was sent after the phases, by an Artillery that fell behind them (a
	// ramp's arrivals wait for its timer, which a busy process runs late).
	if last := time.UnixMilli(rep.Aggregate.LastMetricAt); rec.TimeoutMs > 0 && last.After(end.Add(time.Duration(rec.TimeoutMs)*time.Millisecond+time.Second)) {
		problems = append(problems, fmt.Sprintf("its last response came %.1f s after its phases ended, more than the %d ms timeout allows: it sent late, behind its phases",
			last.Sub(end).Seconds(), rec.TimeoutMs))
	}
	res := &loadgen.Result{Schema: loadgen.ResultSchema, Tool: "artillery", StatusCodes: map[int]int64{},
		Errors: loadgen.ErrorCounts{Classes: map[string]int64{}}}
	a := &res.Accounting
	var responses, failed int64
	for name, n := range c {
		switch {
		case strings.HasPrefix(name, "http.codes."):
			code, err := strconv.Atoi(strings.TrimPrefix(name, "http.codes."))
			if err != nil {
				return nil, fmt.Errorf("artillery result: counter %q", name)
			}
			res.StatusCodes[code] += n
			responses += n
			if code >= 400 {
				a.HTTPErrors += n
			} else {
				a.Completed += n
			}
		case strings.HasPrefix(name, "errors."):
			class := strings.TrimPrefix(name, "errors.")
			res.Errors.Classes[class] += n
			failed += n
			switch {
			case artilleryTimeouts[class]:
				a.Timeouts += n
				res.Errors.Timeout += n
			case class == "ECONNREFUSED" || class == "EHOSTUNREACH" || class == "ENETUNREACH":
				a.SocketErrors += n
				res.Errors.Connect += n
			default:
				a.SocketErrors += n
				res.Errors.Read += n
			}
		}
	}
	a.Errors = a.HTTPErrors + a.SocketErrors
	res.Errors.Status = a.HTTPErrors
	created := c["vusers.created"]
	problems = append(problems, artilleryCrossCheck(c, rec, created, responses, failed, a.Completed)...)
	due := int64(math.Round(rec.Due))
	if float64(created) > rec.Due+artilleryOverrun(rec.Due) {
		problems = append(problems, fmt.Sprintf("it created %d virtual users, more than the %.0f its phases offer", created, rec.Due))
	}
	a.Due = max(due, created)
	a.Unsent = a.Due - created

	h := hdr.New(1, 3_600_000_000, 3)
	for v, n := range rec.LatencyUs {
		us, err := strconv.ParseInt(v, 10, 64)
		if err != nil || us < 0 || n < 0 {
			return nil, fmt.Errorf("artillery result: latency %q × %d", v, n)
		}
		if err := h.RecordValues(max(1, us), n); err != nil {
			return nil, fmt.Errorf("artillery result: latency %q: %w", v, err)
		}
	}
	res.Latency = loadgen.Summarize(h)
	res.UncorrectedLatency = res.Latency
	res.Start, res.End = start, end
	res.DurationSeconds = end.Sub(start).Seconds()
	res.Requests = responses
	res.Bytes = c["http.downloaded_bytes"]
	if res.DurationSeconds > 0 {
		res.AchievedRate = float64(res.Requests) / res.DurationSeconds
		res.OfferedRate = rec.Due / res.DurationSeconds
		res.DueRate = float64(a.Due) / res.DurationSeconds
	}
	res.Endpoints = []loadgen.EndpointResult{{Label: "GET " + rec.Path, Count: responses, Errors: a.Errors + a.Timeouts, Bytes: res.Bytes,
		Completed: rec.CompletedBodies, BodyBytes: rec.CompletedBodyBytes, Latency: res.Latency}}
	res.Config = loadgen.ConfigEcho{Mode: "open", Threads: int(rec.Workers), DurationSeconds: res.DurationSeconds}
	return res, inconsistent("artillery", problems)
}

// artilleryWindow is the measured window: from the first phase's start to
// the last one's end, as Artillery's threads saw them. A phase that
// never ran, or a run much longer than declared, is a contradiction.
func artilleryWindow(rec *artilleryRecord, problems *[]string) (start, end time.Time, err error) {
	runs := map[int]artilleryPhaseRun{}
	for _, p := range rec.Phases {
		runs[p.Index] = p
	}
	first, last := runs[0], runs[len(rec.Declared)-1]
	if first.StartedMs == nil || last.EndedMs == nil {
		return start, end, fmt.Errorf("artillery result: its %d phases were not seen from the first one's start to the last one's end (%d phase events)", len(rec.Declared), len(rec.Phases))
	}
	start, end = time.UnixMilli(*first.StartedMs).UTC(), time.UnixMilli(*last.EndedMs).UTC()
	// A phase's start is the main thread's clock when a worker's message
	// arrived, its end the worker's own: a starved process delivers the
	// message late, while its first phase ran at least its declared length
	// before it ended. The earlier of the two is nearer the real start.
	if first.EndedMs != nil {
		if alt := time.UnixMilli(*first.EndedMs - rec.Declared[0]).UTC(); alt.Before(start) {
			start = alt
		}
	}
	var declared time.Duration
	for i, ms := range rec.Declared {
		declared += time.Duration(ms) * time.Millisecond
		if p, ok := runs[i]; !ok || p.StartedMs == nil || p.EndedMs == nil {
			*problems = append(*problems, fmt.Sprintf("phase %d of %d did not both start and end", i+1, len(rec.Declared)))
		}
	}
	if len(rec.Phases) > len(rec.Declared) {
		*problems = append(*problems, fmt.Sprintf("it ran %d phases, %d were declared", len(rec.Phases), len(rec.Declared)))
	}
	ran := end.Sub(start)
	if slack := max(time.Second, declared/50); ran > declared+slack {
		*problems = append(*problems, fmt.Sprintf("its phases ran %.1f s, %.1f s were declared", ran.Seconds(), declared.Seconds()))
	}
	return start, end, nil
}

// artilleryCrossCheck compares Artillery's counters with each other and
// with the processor's: every virtual user sends one request and either
// gets a response or fails, and every response was timed once.
func artilleryCrossCheck(c map[string]int64, rec *artilleryRecord, created, responses, failed, completed int64) []string {
	var problems []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	var timed int64
	for _, n := range rec.LatencyUs {
		timed += n
	}
	check(c["http.responses"] == responses, "http.responses is %d but its status codes count %d", c["http.responses"], responses)
	check(c["vusers.failed"] == failed, "vusers.failed is %d but its errors count %d", c["vusers.failed"], failed)
	check(created == c["vusers.completed"]+c["vusers.failed"], "%d virtual users created, but %d completed and %d failed", created, c["vusers.completed"], c["vusers.failed"])
	check(created == responses+failed, "%d virtual users (one request each), but %d responses and %d failures", created, responses, failed)
	check(timed == responses, "%d responses, but the processor timed %d", responses, timed)
	check(rec.CompletedBodies == completed, "%d responses below status 400, but the processor counted %d", completed, rec.CompletedBodies)
	check(created == 0 || rec.Workers > 0, "%d virtual users, but no worker announced itself", created)
	return problems
}
