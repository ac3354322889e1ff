package results

import (
	"encoding/json"
	"math"
	"testing"
)

// The range of n values covers the median 1 - 2·0.5^n of the time; 95 % is
// first reached at six, and with more the interval narrows to the largest k
// that keeps it.
func TestMedianIntervalCoverage(t *testing.T) {
	for _, c := range []struct {
		n      int
		method string
		k      int // the interval is [x_(k), x_(n-k+1)]
		cov    float64
	}{
		{2, IntervalRange, 1, 0.5},
		{3, IntervalRange, 1, 0.75},
		{4, IntervalRange, 1, 0.875},
		{5, IntervalRange, 1, 0.9375},
		{6, IntervalExact, 1, 0.96875},
		{10, IntervalExact, 2, 1 - 2*11.0/1024},
		{20, IntervalExact, 6, 1 - 2*(1+20+190+1140+4845+15504.0)/1048576},
	} {
		xs := make([]float64, c.n)
		for i := range xs {
			xs[i] = float64(100 - i) // descending: MedianCI must sort
		}
		e := MedianCI(xs)
		wantLo, wantHi := float64(100-c.n+c.k), float64(100-c.k+1)
		if e.Method != c.method || e.Lo != wantLo || e.Hi != wantHi || math.Abs(e.Coverage-c.cov) > 1e-12 {
			t.Errorf("n=%d: %s [%g, %g] coverage %g; want %s [%g, %g] coverage %g", c.n, e.Method, e.Lo, e.Hi, e.Coverage, c.method, wantLo, wantHi, c.cov)
		}
	}
}

// Two repetitions give no 95 % interval: the table says "range" and 50 %,
// where the bootstrap printed [min, max] as if it were 95 %.
func TestFewRepetitionsPrintARangeWithItsCoverage(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want string
	}{
		{[]float64{11.9, 13.0}, "12.4 (range 11.9–13.0, n=2, 50 %)"},
		{[]float64{12.3, 11.9, 13.0}, "12.3 (range 11.9–13.0, n=3, 75 %)"},
		{[]float64{12.3, 11.9, 13.0, 12.0, 12.5}, "12.3 (range 11.9–13.0, n=5, 93.8 %)"},
		{[]float64{12.3, 11.9, 13.0, 12.0, 12.5, 12.2}, "12.2 [11.9–13.0] 96.9 %"},
		{[]float64{7}, "7.0 (n=1)"},
		{nil, "-"},
	} {
		if got := MedianCI(c.xs).String(); got != c.want {
			t.Errorf("%v: %q, want %q", c.xs, got, c.want)
		}
	}
	// an archive written before the method was recorded still reads, and
	// says its interval was a bootstrap rather than claim a coverage
	var old Estimate
	if err := json.Unmarshal([]byte(`{"median":12.3,"ci_lo":11.9,"ci_hi":13,"n":3}`), &old); err != nil {
		t.Fatal(err)
	}
	if got := old.String(); got != "12.3 [11.9–13.0] bootstrap" {
		t.Errorf("old estimate prints %q", got)
	}
}

// A ratio of medians divides the numerator's interval by the denominator's;
// it claims 95 % only when each side reaches √95 % (seven repetitions).
func TestRatioCIBoundsAndCoverage(t *testing.T) {
	num := []float64{100, 104, 96, 102, 98, 101, 99}
	den := []float64{50, 52, 48, 51, 49, 50, 50}
	e := RatioCI(num, den)
	if e.Median != 2 || e.Method != IntervalRatio || e.Lo != 96.0/52 || e.Hi != 104.0/48 {
		t.Fatalf("7/7: %+v", e)
	}
	if want := (1 - 2.0/128) * (1 - 2.0/128); math.Abs(e.Coverage-want) > 1e-12 || e.Coverage < TargetCoverage {
		t.Fatalf("7/7 coverage %g, want %g", e.Coverage, want)
	}
	if got := e.Format(3); got != "2.000 [1.846–2.167] ≥ 96.9 %" {
		t.Errorf("7/7 prints %q", got)
	}
	few := RatioCI(num[:2], den[:3])
	if few.Coverage != 0.5*0.75 || few.Lo != 100.0/52 || few.Hi != 104.0/48 {
		t.Fatalf("2/3: %+v", few)
	}
	if got := few.Format(2); got != "2.04 (ranges 1.92–2.17, n=2/3, ≥ 37.5 %)" {
		t.Errorf("2/3 prints %q", got)
	}
	if e := RatioCI(num, den[:1]); e.Method != "" || e.Lo != e.Hi || e.Format(2) != "2.00 (n=7/1)" {
		t.Errorf("one denominator value gives no interval, got %+v, %q", e, e.Format(2))
	}
	if e := RatioCI([]float64{1, 2}, []float64{0, 4}); e.Method != "" || e.Lo != e.Hi {
		t.Errorf("a denominator range reaching 0 bounds nothing, got %+v", e)
	}
}
