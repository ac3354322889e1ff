package studies

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/orchbench/orchbench/harness/results"
)

// fmtEstimate prints an estimate with the given decimals and its
// interval's coverage (results.Estimate.Format), and the sample size when
// the interval does not already say it: "1.08 [0.97–1.20] 97.9 % (n=10)".
func fmtEstimate(e results.Estimate, decimals int) string {
	text := e.Format(decimals)
	switch e.Method {
	case results.IntervalExact:
		text += fmt.Sprintf(" (n=%d)", e.N)
	case results.IntervalRatio:
		if e.Coverage >= results.TargetCoverage {
			text += fmt.Sprintf(" (n=%d/%d)", e.N, e.NDen)
		}
	}
	return text
}

// WriteText prints the table for a terminal: the same rows as the report's
// section, aligned, then its source and notes.
func (t *Table) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "\n%s\n", t.Title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Columns, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if t.Source != "" {
		fmt.Fprintf(w, "published: %s\n", t.Source)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	return nil
}
