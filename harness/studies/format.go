package studies

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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
