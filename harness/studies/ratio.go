package studies

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/orchbench/orchbench/harness/results"
)

// ratioCI is the ratio of the medians of num and den with a percentile
// bootstrap 95 % interval, both samples resampled independently, seeded
// like results.MedianCI so a report is reproducible.
func ratioCI(num, den []float64) results.Estimate {
	if len(num) == 0 || len(den) == 0 {
		return results.Estimate{}
	}
	a, b := results.MedianCI(num).Median, results.MedianCI(den).Median
	if b == 0 {
		return results.Estimate{}
	}
	e := results.Estimate{Median: a / b, Lo: a / b, Hi: a / b, N: min(len(num), len(den))}
	if len(num) == 1 && len(den) == 1 {
		return e
	}
	rng := rand.New(rand.NewPCG(results.BootstrapSeed, uint64(len(num))<<32|uint64(len(den))))
	ratios := make([]float64, 0, results.BootstrapResamples)
	sa, sb := make([]float64, len(num)), make([]float64, len(den))
	for range results.BootstrapResamples {
		for i := range sa {
			sa[i] = num[rng.IntN(len(num))]
		}
		for i := range sb {
			sb[i] = den[rng.IntN(len(den))]
		}
		if mb := medianOf(sb); mb != 0 {
			ratios = append(ratios, medianOf(sa)/mb)
		}
	}
	sort.Float64s(ratios)
	e.Lo, e.Hi = ratios[len(ratios)*25/1000], ratios[len(ratios)*975/1000]
	return e
}

func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// fmtEstimate prints an estimate with the given decimals: "1.08 [0.97–1.20]".
func fmtEstimate(e results.Estimate, decimals int) string {
	if e.N == 0 {
		return "-"
	}
	f := fmt.Sprintf("%%.%df", decimals)
	if e.N == 1 || e.Lo == e.Hi {
		return fmt.Sprintf(f+" (n=%d)", e.Median, e.N)
	}
	return fmt.Sprintf(f+" ["+f+"–"+f+"] (n=%d)", e.Median, e.Lo, e.Hi, e.N)
}
