package loadgen

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// FuzzParseWrk2Text requires of every report ParseWrk2Text accepts what the
// archive relies on: it survives JSON, its percentiles and spectrum are in
// range and in order, and WriteText prints it back into a report that
// parses to the same counts.
func FuzzParseWrk2Text(f *testing.F) {
	report, err := os.ReadFile("testdata/wrk2-report.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(report))
	f.Fuzz(func(t *testing.T, text string) {
		res, err := ParseWrk2Text(strings.NewReader(text))
		if err != nil {
			return
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("parsed report does not fit the JSON archive: %v", err)
		}
		var back Result
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(&back); !bytes.Equal(again, data) {
			t.Fatalf("JSON round trip changed the result:\n%s\n%s", data, again)
		}
		for _, l := range []LatencySummary{res.Latency, res.UncorrectedLatency} {
			requireOrdered(t, l)
		}

		var out bytes.Buffer
		if err := WriteText(&out, res, ReportOptions{Latency: true, UncorrectedLatency: true}); err != nil {
			t.Fatal(err)
		}
		text2 := out.String()
		reread, err := ParseWrk2Text(strings.NewReader(text2))
		if err != nil {
			t.Fatalf("WriteText's report of a parsed report does not parse: %v\n%s", err, text2)
		}
		same := reread.Requests == res.Requests && reread.Errors.Status == res.Errors.Status &&
			reread.Config.Threads == res.Config.Threads && reread.Config.Connections == res.Config.Connections &&
			reread.Config.URL == res.Config.URL
		for i, l := range []LatencySummary{res.Latency, res.UncorrectedLatency} {
			r := []LatencySummary{reread.Latency, reread.UncorrectedLatency}[i]
			same = same && len(r.Percentiles) == len(l.Percentiles) && len(r.Spectrum) == len(l.Spectrum)
		}
		if !same {
			t.Fatalf("report changed through WriteText:\nparsed   %+v\nreparsed %+v\n%s", *res, *reread, text2)
		}
	})
}

func requireOrdered(t *testing.T, l LatencySummary) {
	t.Helper()
	if l.Count < 0 || l.Max < 0 || l.Mean < 0 || l.StdDev < 0 || math.IsInf(l.Mean, 0) || math.IsInf(l.StdDev, 0) {
		t.Fatalf("negative or infinite summary %+v", l)
	}
	for i, p := range l.Percentiles {
		if p.Percentile < 0 || p.Percentile > 100 || p.Value < 0 {
			t.Fatalf("percentile %+v out of range", p)
		}
		if i > 0 && (p.Percentile < l.Percentiles[i-1].Percentile || p.Value < l.Percentiles[i-1].Value) {
			t.Fatalf("percentiles not monotonic: %+v", l.Percentiles)
		}
	}
	for i, s := range l.Spectrum {
		if s.Percentile < 0 || s.Percentile > 1 || s.Value < 0 || s.TotalCount < 0 {
			t.Fatalf("spectrum row %+v out of range", s)
		}
		if i > 0 && (s.Percentile < l.Spectrum[i-1].Percentile || s.Value < l.Spectrum[i-1].Value || s.TotalCount < l.Spectrum[i-1].TotalCount) {
			t.Fatalf("spectrum not monotonic: %+v", l.Spectrum)
		}
	}
}

// Reports once accepted with values the archive cannot hold or that no wrk
// prints (the URL one found by FuzzParseWrk2Text, the others in review);
// each is now refused with a reason.
func TestParseWrk2TextRejectsDamagedReports(t *testing.T) {
	const tail = "  10 requests in 1.00s, 1.00KB read\nRequests/sec:     10.00\n"
	const spectrum = "  Latency Distribution (HdrHistogram - Recorded Latency)\n  Detailed Percentile spectrum:\n"
	const end = "----------------------------------------------------------\n"
	for name, c := range map[string]struct{ text, reason string }{
		"NaN rate":                 {"Requests/sec: NaN\n", "Requests/sec is NaN"},
		"infinite rate":            {"Requests/sec: +Inf\n", "Requests/sec is +Inf"},
		"negative status errors":   {"  Non-2xx or 3xx responses: -3\n" + tail, "a count is -3"},
		"spectrum value overflows": {spectrum + " 1e306 0.5 3\n" + end + tail, "spectrum row +Infus"},
		"spectrum out of order":    {spectrum + " 2.0 0.5 3\n 1.0 0.9 4\n" + end + tail, "follows 2000us"},
		"percentiles out of order": {" 90.000%    2.00ms\n 50.000%    1.00ms\n" + tail, "50% at 1000us follows 90% at 2000us"},
		"two reports run together": {" 50.000%    1.00ms\n 99.000%    3.00ms\n 50.000%    1.00ms\n" + tail, "follows 99%"},
		"latency past int64":       {" 50.000%    99999999999999999999999ms\n" + tail, "50% at -1us"},
		"URL not UTF-8":            {"Running 0 test @ \xb5\nRequests/sec:0\n", `the URL "\xb5" is not UTF-8`},
		"NaN mean":                 {"    Latency   NaNms   1.00ms   2.00ms   50.00%\n" + tail, "mean NaN"},
	} {
		res, err := ParseWrk2Text(strings.NewReader(c.text))
		if err == nil {
			t.Errorf("%s: accepted as %+v", name, res)
		} else if !strings.HasPrefix(err.Error(), "not a wrk/wrk2 report") || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, want it to say %q", name, err, c.reason)
		}
	}
	if _, err := ParseWrk2Text(strings.NewReader(" 50.000%    1.00ms\n 99.000%    3.00ms\n" + tail)); err != nil {
		t.Fatalf("an ordered wrk report: %v", err)
	}
	// WriteText's column overflows for a value wider than 10 characters;
	// the line must still read back.
	res, err := ParseWrk2Text(strings.NewReader("  0.000%11666.67m \n" + tail))
	if err != nil || len(res.Latency.Percentiles) != 1 || res.Latency.Percentiles[0].Value != 700000200000 {
		t.Fatalf("an overflowing percentile line: %+v, %v", res, err)
	}
}
