package loadgen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseWrk2Text reads the text report of wrk2 (or wrk, or WriteText) into a
// Result, so runs of a real wrk2 can be archived and compared alongside the
// generator's own. Fields the text does not carry stay zero; the encoded
// histograms are empty because the text only holds the spectrum.
func ParseWrk2Text(r io.Reader) (*Result, error) {
	res := &Result{Schema: ResultSchema, Tool: "wrk2", StatusCodes: map[int]int64{}}
	res.Errors.Classes = map[string]int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur *LatencySummary // section being read
	inSpectrum := false
	sawRate := false
	for sc.Scan() {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "Running "):
			if m := reRunning.FindStringSubmatch(trim); m != nil {
				if d, err := ParseDuration(m[1]); err == nil {
					res.Config.DurationSeconds = d.Seconds()
				}
				// RE2's \S takes a vertical tab, which strings.Fields (and
				// the TrimSpace a reprinted report goes through) treats
				// as a space: keep only what survives a reprint
				if f := strings.Fields(m[2]); len(f) > 0 {
					res.Config.URL = f[0]
				}
			}
		case reThreads.MatchString(trim):
			m := reThreads.FindStringSubmatch(trim)
			res.Config.Threads, _ = strconv.Atoi(m[1])
			res.Config.Connections, _ = strconv.Atoi(m[2])
		case strings.HasPrefix(trim, "Latency Distribution"):
			inSpectrum = false
			if strings.Contains(trim, "Uncorrected") {
				cur = &res.UncorrectedLatency
			} else {
				cur = &res.Latency
			}
			cur.Unit = "us"
		case strings.HasPrefix(trim, "Latency ") && cur == nil:
			// Thread Stats row: Avg, Stdev, Max — a fallback for reports
			// printed without -L.
			f := strings.Fields(trim)
			if len(f) >= 4 {
				res.Latency.Unit = "us"
				res.Latency.Mean, _ = parseTimeUs(f[1])
				res.Latency.StdDev, _ = parseTimeUs(f[2])
				mx, _ := parseTimeUs(f[3])
				res.Latency.Max = wholeCount(mx)
			}
		case strings.HasPrefix(trim, "Detailed Percentile spectrum"):
			inSpectrum = true
		case strings.HasPrefix(trim, "#[Mean"):
			if m := reFooter.FindStringSubmatch(trim); m != nil && cur != nil {
				a, _ := strconv.ParseFloat(m[1], 64)
				b, _ := strconv.ParseFloat(m[2], 64)
				cur.Mean, cur.StdDev = a*1000, b*1000
			}
		case strings.HasPrefix(trim, "#[Max"):
			if m := reFooter.FindStringSubmatch(trim); m != nil && cur != nil {
				a, _ := strconv.ParseFloat(m[1], 64)
				b, _ := strconv.ParseFloat(m[2], 64)
				cur.Max, cur.Count = wholeCount(math.Round(a*1000)), wholeCount(b)
			}
		case strings.HasPrefix(trim, "#[Buckets"):
			if m := reFooter.FindStringSubmatch(trim); m != nil && cur != nil {
				a, _ := strconv.ParseFloat(m[1], 64)
				b, _ := strconv.ParseFloat(m[2], 64)
				cur.Buckets, cur.SubBuckets = int(wholeCount(a)), int(wholeCount(b))
			}
			inSpectrum = false
		case strings.HasPrefix(trim, "----------"):
			cur, inSpectrum = nil, false
		case inSpectrum && cur != nil:
			f := strings.Fields(trim)
			if len(f) < 3 {
				continue
			}
			v, err1 := strconv.ParseFloat(f[0], 64)
			p, err2 := strconv.ParseFloat(f[1], 64)
			n, err3 := strconv.ParseInt(f[2], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil {
				continue // the column header
			}
			cur.Spectrum = append(cur.Spectrum, SpectrumPoint{Value: v * 1000, Percentile: p, TotalCount: n})
		case rePercentile.MatchString(trim):
			m := rePercentile.FindStringSubmatch(trim)
			p, _ := strconv.ParseFloat(m[1], 64)
			v, err := parseTimeUs(m[2])
			if err != nil {
				continue
			}
			target := cur
			if target == nil {
				target = &res.Latency // wrk's own "Latency Distribution" block
			}
			target.Unit = "us"
			target.Percentiles = append(target.Percentiles, PercentileValue{Percentile: p, Value: wholeCount(math.Round(v))})
		case reRequests.MatchString(trim):
			m := reRequests.FindStringSubmatch(trim)
			res.Requests, _ = strconv.ParseInt(m[1], 10, 64)
			if us, err := parseTimeUs(m[2]); err == nil {
				res.DurationSeconds = us / 1e6
			}
			if b, err := parseBytes(m[3]); err == nil {
				res.Bytes = wholeCount(b)
			}
		case strings.HasPrefix(trim, "Socket errors:"):
			for _, m := range reCounter.FindAllStringSubmatch(trim, -1) {
				n, _ := strconv.ParseInt(m[2], 10, 64)
				switch m[1] {
				case "connect":
					res.Errors.Connect = n
				case "read":
					res.Errors.Read = n
				case "write":
					res.Errors.Write = n
				case "timeout":
					res.Errors.Timeout = n
				}
			}
		case strings.HasPrefix(trim, "Non-2xx or 3xx responses:"):
			res.Errors.Status, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(trim, "Non-2xx or 3xx responses:")), 10, 64)
		case strings.HasPrefix(trim, "Requests/sec:"):
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(trim, "Requests/sec:")), 64)
			if err == nil {
				res.AchievedRate, sawRate = v, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !sawRate {
		return nil, fmt.Errorf("not a wrk/wrk2 report: no Requests/sec line")
	}
	res.Config.Mode = "open"
	if res.Latency.Count == 0 {
		res.Latency.Count = res.Requests
	}
	if err := checkReport(res); err != nil {
		return nil, fmt.Errorf("not a wrk/wrk2 report: %w", err)
	}
	return res, nil
}

// wholeCount converts a number read as a float into an int64, or into -1,
// which checkReport rejects, when no int64 holds it: Go leaves the
// conversion of an out-of-range float to the platform.
func wholeCount(v float64) int64 {
	if math.IsNaN(v) || v < math.MinInt64 || v >= math.MaxInt64 {
		return -1
	}
	return int64(v)
}

// checkReport rejects what neither wrk, wrk2 nor WriteText prints, so a
// damaged or concatenated text is refused instead of archived: a count or
// time below zero, a number that is not finite or a URL that is not UTF-8
// (the archive is JSON, which holds neither NaN, infinity nor stray
// bytes), and percentiles out of range or out of order.
func checkReport(res *Result) error {
	if !utf8.ValidString(res.Config.URL) {
		// JSON would archive it with U+FFFD in place of the bad bytes
		return fmt.Errorf("the URL %q is not UTF-8", res.Config.URL)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Requests/sec", res.AchievedRate}, {"the measured duration", res.DurationSeconds}, {"the test duration", res.Config.DurationSeconds}} {
		if !finiteNonNegative(f.v) {
			return fmt.Errorf("%s is %v", f.name, f.v)
		}
	}
	e := res.Errors
	for _, n := range []int64{res.Requests, res.Bytes, e.Connect, e.Read, e.Write, e.Timeout, e.Status} {
		if n < 0 {
			return fmt.Errorf("a count is %d (requests, bytes or errors)", n)
		}
	}
	if err := checkLatency(res.Latency); err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	if err := checkLatency(res.UncorrectedLatency); err != nil {
		return fmt.Errorf("uncorrected latency: %w", err)
	}
	return nil
}

func checkLatency(l LatencySummary) error {
	if !finiteNonNegative(l.Mean) || !finiteNonNegative(l.StdDev) {
		return fmt.Errorf("mean %v, standard deviation %v", l.Mean, l.StdDev)
	}
	if l.Count < 0 || l.Min < 0 || l.Max < 0 || l.Buckets < 0 || l.SubBuckets < 0 {
		return fmt.Errorf("count %d, min %d, max %d, buckets %d, sub-buckets %d", l.Count, l.Min, l.Max, l.Buckets, l.SubBuckets)
	}
	for i, p := range l.Percentiles {
		if !(p.Percentile >= 0 && p.Percentile <= 100) || p.Value < 0 {
			return fmt.Errorf("%v%% at %dus", p.Percentile, p.Value)
		}
		if i > 0 && (p.Percentile < l.Percentiles[i-1].Percentile || p.Value < l.Percentiles[i-1].Value) {
			return fmt.Errorf("%v%% at %dus follows %v%% at %dus", p.Percentile, p.Value, l.Percentiles[i-1].Percentile, l.Percentiles[i-1].Value)
		}
	}
	for i, s := range l.Spectrum {
		if !finiteNonNegative(s.Value) || !(s.Percentile >= 0 && s.Percentile <= 1) || s.TotalCount < 0 {
			return fmt.Errorf("spectrum row %vus, percentile %v, count %d", s.Value, s.Percentile, s.TotalCount)
		}
		if prev := l.Spectrum[max(i-1, 0)]; s.Value < prev.Value || s.Percentile < prev.Percentile || s.TotalCount < prev.TotalCount {
			return fmt.Errorf("spectrum row %vus, percentile %v, count %d follows %vus, %v, %d", s.Value, s.Percentile, s.TotalCount, prev.Value, prev.Percentile, prev.TotalCount)
		}
	}
	return nil
}

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// rePercentile needs no space after the %: a value wider than its
// 10-character column (over 99999 minutes) runs into it, in wrk2's layout
// and in WriteText's.
var (
	reRunning    = regexp.MustCompile(`^Running (\S+) test @ (\S+)`)
	reThreads    = regexp.MustCompile(`^(\d+) threads and (\d+) connections`)
	reFooter     = regexp.MustCompile(`=\s*([-\d.]+),\s*\S+(?:\s+\S+)?\s*=\s*([-\d.]+)\]`)
	rePercentile = regexp.MustCompile(`^([\d.]+)%\s*([\d.]+(?:us|ms|s|m|h))$`)
	reRequests   = regexp.MustCompile(`^(\d+) requests in ([\d.]+\w+), ([\d.]+\w*B) read`)
	reCounter    = regexp.MustCompile(`(connect|read|write|timeout) (\d+)`)
)

// parseTimeUs reads wrk's time format ("725.00us", "1.02ms", "2.00s",
// "1.50m", "1.00h") into microseconds.
func parseTimeUs(s string) (float64, error) {
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6}, {"h", 3600e6}} {
		if strings.HasSuffix(s, u.suffix) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, u.suffix), 64)
			return v * u.scale, err
		}
	}
	return 0, fmt.Errorf("bad time %q", s)
}

// parseBytes reads wrk's binary sizes ("19.46MB", "500.00B").
func parseBytes(s string) (float64, error) {
	s = strings.TrimSuffix(s, "B")
	scale := 1.0
	if n := len(s); n > 0 {
		if i := strings.IndexByte("KMGTP", s[n-1]); i >= 0 {
			scale = math.Pow(1024, float64(i+1))
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * scale, err
}
