package studies

import (
	"fmt"

	"github.com/orchbench/orchbench/harness/results"
)

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
