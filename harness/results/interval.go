package results

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Estimate is a median over repetitions with an interval that says how
// much it can be trusted, and how much: Coverage is the probability that
// the interval holds the true median, whatever the distribution.
//
// With few repetitions no distribution-free interval reaches 95 %: the
// widest one, the observed range, covers the median with probability
// 1 - 2·0.5^n (50 % for two repetitions, 93.75 % for five). A bootstrap
// printed as "95 %" there overstated it; Method says which interval this
// is, so tables print a range as a range.
type Estimate struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"ci_lo"`
	Hi     float64 `json:"ci_hi"`
	N      int     `json:"n"`
	// Method is how Lo and Hi were found (IntervalExact, IntervalRange,
	// IntervalRatio), empty in archives written before it was recorded and
	// when there is no interval (one repetition).
	Method string `json:"method,omitempty"`
	// Coverage is the interval's coverage, 0–1; for a ratio, a lower bound.
	Coverage float64 `json:"coverage,omitempty"`
	// NDen is, for a ratio, the denominator's sample size (N the numerator's).
	NDen int `json:"n_den,omitempty"`
}

// How an Estimate's interval was made.
const (
	// IntervalExact is the order-statistic interval [x_(k), x_(n-k+1)] of
	// the median, k the largest that keeps the coverage at or above the
	// target (binomial, distribution-free, no randomness).
	IntervalExact = "order-statistic"
	// IntervalRange is the observed range [min, max], used when too few
	// repetitions reach the target; Coverage says how little it covers.
	IntervalRange = "range"
	// IntervalRatio bounds a ratio of medians by the intervals of both:
	// [loNum/hiDen, hiNum/loDen], covering at least the product of theirs.
	IntervalRatio = "ratio"
)

// TargetCoverage is what an interval aims at.
const TargetCoverage = 0.95

// MinRepsForTarget is the fewest repetitions whose median interval can reach
// TargetCoverage: with six, [min, max] covers 1 - 2/64 = 96.9 %.
const MinRepsForTarget = 6

// MedianCI returns the median of xs and its exact order-statistic interval
// at TargetCoverage, or the observed range with its coverage when xs is too
// short to reach it.
func MedianCI(xs []float64) Estimate {
	n := len(xs)
	if n == 0 {
		return Estimate{}
	}
	e := Estimate{Median: median(xs), N: n}
	if n == 1 {
		e.Lo, e.Hi = e.Median, e.Median
		return e
	}
	e.Lo, e.Hi, e.Coverage, e.Method = medianInterval(xs, TargetCoverage)
	return e
}

// medianInterval picks the narrowest order-statistic interval of the median
// whose coverage is at least target; below that many values, the range.
func medianInterval(xs []float64, target float64) (lo, hi, coverage float64, method string) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	best := 0
	for k := 1; 2*k <= n; k++ {
		if orderStatisticCoverage(n, k) >= target {
			best = k
		}
	}
	if best == 0 {
		return s[0], s[n-1], orderStatisticCoverage(n, 1), IntervalRange
	}
	return s[best-1], s[n-best], orderStatisticCoverage(n, best), IntervalExact
}

// orderStatisticCoverage is P(x_(k) <= median <= x_(n-k+1)) for n values
// from any continuous distribution: 1 - 2·P(Binomial(n, 1/2) < k).
func orderStatisticCoverage(n, k int) float64 {
	below := 0.0
	for i := 0; i < k; i++ {
		below += binomial(n, i)
	}
	return 1 - 2*below*math.Pow(0.5, float64(n))
}

func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// RatioCI is the ratio of the medians of num and den. Its interval divides
// the numerator's interval by the denominator's, the low end by the high
// one: both samples are independent, so it covers the true ratio at least
// as often as both intervals hold. Each is taken at √TargetCoverage so the
// product reaches TargetCoverage when the samples allow (seven repetitions
// each); with fewer, the ranges are used and Coverage says what they give.
// N is the numerator's sample, NDen the denominator's.
func RatioCI(num, den []float64) Estimate {
	if len(num) == 0 || len(den) == 0 {
		return Estimate{}
	}
	a, b := median(num), median(den)
	if b == 0 {
		return Estimate{}
	}
	e := Estimate{Median: a / b, Lo: a / b, Hi: a / b, N: len(num), NDen: len(den)}
	if len(num) == 1 || len(den) == 1 {
		// one value says nothing of where its median lies: no interval
		return e
	}
	each := math.Sqrt(TargetCoverage)
	aLo, aHi, aCov, _ := medianInterval(num, each)
	bLo, bHi, bCov, _ := medianInterval(den, each)
	if aLo < 0 || bLo <= 0 {
		// a denominator interval reaching zero bounds nothing
		return e
	}
	e.Lo, e.Hi, e.Coverage, e.Method = aLo/bHi, aHi/bLo, aCov*bCov, IntervalRatio
	return e
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// String formats an estimate for tables with one decimal; see Format.
func (e Estimate) String() string { return e.Format(1) }

// Format prints the median and its interval with the given decimals, and
// the interval's coverage beside it: "12.3 [11.9–13.0] 96.9 %" for an exact
// interval, "12.3 (range 11.9–13.0, n=2, 50 %)" when too few repetitions
// reach 95 %, "1.08 [0.97–1.20] ≥ 95.1 %" for a ratio, "12.3 (n=1)" alone.
func (e Estimate) Format(decimals int) string {
	if e.N == 0 {
		return "-"
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', decimals, 64) }
	m, lo, hi := num(e.Median), num(e.Lo), num(e.Hi)
	switch e.Method {
	case IntervalExact:
		return fmt.Sprintf("%s [%s–%s] %s", m, lo, hi, coverageText(e.Coverage))
	case IntervalRange:
		return fmt.Sprintf("%s (range %s–%s, n=%d, %s)", m, lo, hi, e.N, coverageText(e.Coverage))
	case IntervalRatio:
		if e.Coverage >= TargetCoverage {
			return fmt.Sprintf("%s [%s–%s] ≥ %s", m, lo, hi, coverageText(e.Coverage))
		}
		return fmt.Sprintf("%s (ranges %s–%s, n=%s, ≥ %s)", m, lo, hi, e.sizes(), coverageText(e.Coverage))
	case "":
		if e.Lo == e.Hi {
			return fmt.Sprintf("%s (n=%s)", m, e.sizes())
		}
		// an archive from before coverage was recorded: a bootstrap
		return fmt.Sprintf("%s [%s–%s] bootstrap", m, lo, hi)
	}
	return fmt.Sprintf("%s [%s–%s] %s", m, lo, hi, e.Method)
}

func (e Estimate) sizes() string {
	if e.NDen > 0 && e.NDen != e.N {
		return fmt.Sprintf("%d/%d", e.N, e.NDen)
	}
	return strconv.Itoa(e.N)
}

// coverageText prints a coverage as a percentage with at most one decimal:
// "50 %", "96.9 %".
func coverageText(c float64) string {
	s := strconv.FormatFloat(100*c, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + " %"
}

// IntervalLegend explains the intervals Format prints, for the heads of
// tables and reports.
const IntervalLegend = "median over repetitions; [lo–hi] with its coverage is the exact order-statistic interval of the median " +
	"(distribution-free, ≥ 95 %, from 6 repetitions); with fewer, the observed range and the only coverage it has " +
	"(n=2 50 %, 3 75 %, 4 87.5 %, 5 93.8 %)"
