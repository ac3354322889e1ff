package toolload

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// jtlColumns are the JTL columns the parse reads (jmeterProps asks for
// them); others are ignored.
var jtlColumns = []string{"timeStamp", "elapsed", "label", "responseCode", "success", "threadName",
	"bytes", "Latency", "Connect", "SampleCount", "ErrorCount", jmeterPlanVar, jmeterHeadersVar}

// nonHTTP starts the response code JMeter records for a request that got
// no HTTP answer; the exception's class follows.
const nonHTTP = "Non HTTP response code: "

// jmeterOpening is how many completed responses of each endpoint, per
// user, make the result's opening, as orchbench's generator counts it.
const jmeterOpening = 3

// jtlSample is one row of the JTL: JMeter's times are whole milliseconds.
type jtlSample struct {
	row                       int   // the sample's place in the file, from 1
	start                     int64 // ms since the epoch
	elapsed, latency, connect int64 // ms
	pos                       int
	endpoint                  string
	status                    int    // 0 without an HTTP answer
	exception                 string // the Java exception of a non-HTTP failure
	success                   bool
	thread                    string
	bytes, body               int64
}

func (s jtlSample) end() int64 { return s.start + s.elapsed }

// headerBytes is how many bytes JMeter counts for a response's header
// lines as it records them (status line first, each ending in \n): each
// line ended by \r\n on the wire, then the blank line.
func headerBytes(lines string) int64 {
	if lines == "" {
		return 0
	}
	return int64(utf8.RuneCountInString(lines)+strings.Count(lines, "\n")) + 2
}

// timedOut says whether a failure without an answer was JMeter's connect
// or response timeout (HttpClient's exceptions).
func (s jtlSample) timedOut() bool {
	return strings.HasSuffix(s.exception, "SocketTimeoutException") || strings.HasSuffix(s.exception, "ConnectTimeoutException")
}

// Parse reads JMeter's CSV JTL. Each sample is one request; its elapsed
// time, from the request's start to its last byte (JMeter's own, in whole
// milliseconds), is its latency, and a timed-out request is recorded at
// the time JMeter gave up, as the study's JMeter reports counted it. The
// window runs from the first request's start to the last one's end.
func (JMeter) Parse(out []byte) (*loadgen.Result, error) {
	samples, plan, err := readJTL(out)
	if err != nil {
		return nil, fmt.Errorf("jmeter result: %w", err)
	}
	res, problems := jmeterResult(samples, plan)
	return res, inconsistent("jmeter", problems)
}

// readJTL reads the rows; a file that is not a JTL of an orchbench plan
// is an error.
func readJTL(out []byte) ([]jtlSample, jmeterPlan, error) {
	var plan jmeterPlan
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, plan, fmt.Errorf("no header line: %v", err)
	}
	col := map[string]int{}
	for i, name := range header {
		col[name] = i
	}
	for _, name := range jtlColumns {
		if _, ok := col[name]; !ok {
			return nil, plan, fmt.Errorf("no %q column (the header is %q)", name, strings.Join(header, ","))
		}
	}
	var samples []jtlSample
	planText := ""
	for n := 1; ; n++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, plan, err
		}
		if len(rec) != len(header) {
			return nil, plan, fmt.Errorf("sample %d has %d fields, the header %d", n, len(rec), len(header))
		}
		field := func(name string) string { return rec[col[name]] }
		s := jtlSample{row: n, thread: field("threadName")}
		for name, dst := range map[string]*int64{"timeStamp": &s.start, "elapsed": &s.elapsed, "Latency": &s.latency,
			"Connect": &s.connect, "bytes": &s.bytes} {
			if *dst, err = strconv.ParseInt(field(name), 10, 64); err != nil {
				return nil, plan, fmt.Errorf("sample %d: %s %q is not an integer", n, name, field(name))
			}
		}
		if field("SampleCount") != "1" {
			return nil, plan, fmt.Errorf("sample %d: SampleCount %q; the plan's samples are single requests", n, field("SampleCount"))
		}
		var ok bool
		if s.pos, s.endpoint, ok = parseSamplerName(field("label")); !ok {
			return nil, plan, fmt.Errorf("sample %d: label %q is not one of the plan's samplers (#position METHOD path)", n, field("label"))
		}
		if s.success, err = strconv.ParseBool(field("success")); err != nil {
			return nil, plan, fmt.Errorf("sample %d: success %q", n, field("success"))
		}
		if (field("ErrorCount") == "1") == s.success || (field("ErrorCount") != "0" && field("ErrorCount") != "1") {
			return nil, plan, fmt.Errorf("sample %d: ErrorCount %q contradicts success %t", n, field("ErrorCount"), s.success)
		}
		code := field("responseCode")
		if exc, found := strings.CutPrefix(code, nonHTTP); found && exc != "" {
			s.exception = exc
		} else if s.status, err = strconv.Atoi(code); err != nil || s.status < 100 || s.status > 599 {
			return nil, plan, fmt.Errorf("sample %d: response code %q is neither an HTTP status nor %q and an exception", n, code, nonHTTP)
		} else {
			s.body = s.bytes - headerBytes(field(jmeterHeadersVar))
		}
		switch p := field(jmeterPlanVar); {
		case planText == "":
			if plan, err = parseJMeterPlan(p); err != nil {
				return nil, plan, fmt.Errorf("sample %d: %v", n, err)
			}
			planText = p
		case p != planText:
			return nil, plan, fmt.Errorf("sample %d comes from another plan (%q, the first sample's %q)", n, p, planText)
		}
		samples = append(samples, s)
	}
	if len(samples) == 0 {
		return nil, plan, fmt.Errorf("no sample was recorded")
	}
	return samples, plan, nil
}

// jtlEndpoint gathers one endpoint's samples.
type jtlEndpoint struct {
	loadgen.EndpointResult
	hist    *hdr.Histogram
	opening loadgen.EndpointBodies
}

// jmeterResult sums the samples, and lists every way they contradict
// each other or the plan they carry.
func jmeterResult(samples []jtlSample, plan jmeterPlan) (*loadgen.Result, []string) {
	res := &loadgen.Result{Schema: loadgen.ResultSchema, Tool: "jmeter " + JMeterVersion, StatusCodes: map[int]int64{}}
	all := hdr.New(1, 24*3600*1e6, 3)
	a := &res.Accounting
	problems := checkThreads(samples, plan)
	eps := map[string]*jtlEndpoint{}
	var order []string
	atPos := map[int]string{}
	opened := map[string]int{} // thread and endpoint: completed responses counted
	first, last := samples[0].start, samples[0].end()
	for _, s := range samples {
		first, last = min(first, s.start), max(last, s.end())
		if s.elapsed < 0 || s.latency < 0 || s.connect < 0 || s.latency > s.elapsed || (s.latency > 0 && s.connect > s.latency) {
			problems = append(problems, fmt.Sprintf("sample %d: times out of order (elapsed %d, latency %d, connect %d ms)", s.row, s.elapsed, s.latency, s.connect))
		}
		if prev, ok := atPos[s.pos]; ok && prev != s.endpoint {
			problems = append(problems, fmt.Sprintf("sample %d: sampler #%d is %q, earlier %q", s.row, s.pos, s.endpoint, prev))
		}
		atPos[s.pos] = s.endpoint
		e := eps[s.endpoint]
		if e == nil {
			e = &jtlEndpoint{EndpointResult: loadgen.EndpointResult{Label: s.endpoint}, hist: hdr.New(1, 24*3600*1e6, 2)}
			e.opening.Label = s.endpoint
			eps[s.endpoint] = e
			order = append(order, s.endpoint)
		}
		a.Due++
		us := s.elapsed * 1000
		switch {
		case s.status == 0 && s.success:
			problems = append(problems, fmt.Sprintf("sample %d: %s counted a success", s.row, s.exception))
		case s.status == 0 && s.timedOut():
			a.Timeouts++
			e.Errors++
			res.Errors.Timeout++
			_ = all.RecordValue(us)
			_ = e.hist.RecordValue(us)
		case s.status == 0:
			a.SocketErrors++
			e.Errors++
			res.Errors.Read++
		default:
			if s.success != (s.status < 400) {
				problems = append(problems, fmt.Sprintf("sample %d: status %d with success %t", s.row, s.status, s.success))
			}
			if s.body < 0 || s.body == s.bytes {
				problems = append(problems, fmt.Sprintf("sample %d: header lines of %d bytes in a response of %d", s.row, s.bytes-s.body, s.bytes))
			}
			res.StatusCodes[s.status]++
			if res.Bytes == 0 || s.bytes < res.ResponseBytes.Min {
				res.ResponseBytes.Min = s.bytes
			}
			res.ResponseBytes.Max = max(res.ResponseBytes.Max, s.bytes)
			res.Bytes += s.bytes
			e.Count++
			e.Bytes += s.bytes
			_ = all.RecordValue(us)
			_ = e.hist.RecordValue(us)
			if s.status >= 400 {
				a.HTTPErrors++
				e.Errors++
				res.Errors.Status++
				continue
			}
			a.Completed++
			e.Completed++
			e.BodyBytes += s.body
			e.BodySquares += float64(s.body) * float64(s.body)
			e.BodyMax = max(e.BodyMax, s.body)
			if key := s.thread + "\x00" + s.endpoint; opened[key] < jmeterOpening {
				opened[key]++
				e.opening.Completed++
				e.opening.BodyBytes += s.body
				e.opening.BodySquares += float64(s.body) * float64(s.body)
			}
		}
	}
	if len(atPos) != plan.Requests {
		problems = append(problems, fmt.Sprintf("%d samplers answered, the plan has %d", len(atPos), plan.Requests))
	}
	a.Errors = a.HTTPErrors + a.SocketErrors
	res.Errors.Classes = map[string]int64{}
	if a.SocketErrors > 0 {
		res.Errors.Classes["jmeter_socket_error"] = a.SocketErrors
	}
	res.Start, res.End = time.UnixMilli(first).UTC(), time.UnixMilli(last).UTC()
	res.DurationSeconds = float64(last-first) / 1000
	res.Requests = a.Completed + a.HTTPErrors
	if res.DurationSeconds > 0 {
		res.AchievedRate = float64(res.Requests) / res.DurationSeconds
	}
	if n := a.Completed + a.HTTPErrors; n > 0 {
		res.ResponseBytes.Mean = float64(res.Bytes) / float64(n)
	}
	res.Latency = loadgen.Summarize(all)
	res.UncorrectedLatency = res.Latency // a closed loop sends when it means to
	for _, label := range order {
		e := eps[label]
		e.Latency = loadgen.Summarize(e.hist)
		res.Endpoints = append(res.Endpoints, e.EndpointResult)
		res.Opening = append(res.Opening, e.opening)
	}
	threads := map[string]bool{}
	for _, s := range samples {
		threads[s.thread] = true
	}
	res.Config = loadgen.ConfigEcho{Mode: "closed", Threads: len(threads), Connections: len(threads), DurationSeconds: res.DurationSeconds,
		Closed: &loadgen.Closed{Users: len(threads), Iterations: int64(plan.Loops * plan.Requests), TimeoutLatency: true}}
	return res, problems
}
