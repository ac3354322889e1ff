package results

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/orchbench/orchbench/harness/experiment"
)

// FormatShow writes the text that `orchbench results show` prints: per-level
// statistics, breaking points, and the steps that failed their gates.
func FormatShow(w io.Writer, rec *SweepRecord, steps []StepResult) error {
	slo := experiment.SLO{}
	name := rec.ID
	if rec.Spec != nil {
		slo = rec.Spec.SLO
		name = rec.Spec.Name
	}
	count := map[Outcome]int{}
	skipped := 0
	for _, r := range steps {
		if r.Skipped {
			skipped++
			continue
		}
		count[r.Outcome]++
	}
	invalid := count[OutcomeInvalid]
	fmt.Fprintf(w, "sweep %s (%s), started %s, seed %d\n", rec.ID, name, rec.Start.UTC().Format("2006-01-02 15:04:05Z"), rec.Seed)
	fmt.Fprintf(w, "%d of %d planned steps done: %d valid, %d broken, %d invalid, %d skipped above a break\n",
		len(steps), len(rec.Plan), count[OutcomeValid], count[OutcomeBroken], invalid, skipped)
	fmt.Fprintf(w, "SLO: p99 <= %s ms, achieved >= %g x offered, errors <= %g\n", p99Text(slo.P99Ms), slo.MinAchievedRatio, slo.MaxErrorRatio)
	fmt.Fprintln(w, "figures: corrected latency in ms; "+IntervalLegend+"; measured repetitions are the valid and broken ones")
	fmt.Fprintln(w)

	levels := Summarize(steps, slo)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONFIGURATION\tLOAD\tMEASURED\tP50\tP99\tACHIEVED RPS\tRPS PER CORE OF THE MEASURED SERVICE\tRPS PER CORE OF THE APPLICATION (ALL ITS TASKS)\tERRORS\tSLO")
	for _, l := range levels {
		status := "ok"
		switch {
		case !l.HasData():
			status = "no valid data"
		case l.Breaks():
			status = "BROKEN: " + joinOr(l.Details, "")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%.2f%%\t%s\n", l.Configuration(), l.Level(), l.Measured, l.Measured+l.Skipped+l.Invalid,
			l.P50, l.P99, l.Achieved, l.ServicePerCoreText(), l.AppPerCoreText(), 100*l.ErrorRatio, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONFIGURATION\tBREAKING POINT\tRULE\tLAST GOOD\tSUSTAINED PER REPETITION\tDETAIL")
	for _, b := range WithSustained(BreakingPoints(levels), steps, slo) {
		last := "-"
		if b.LastGood != nil {
			last = b.LastGood.Level()
		}
		if !b.Reached {
			upTo := "no valid data"
			if b.MaxMeasured != nil {
				upTo = "not reached up to " + b.MaxMeasured.Level()
			}
			fmt.Fprintf(tw, "%s\t-\t-\t%s\t%s\t%s\n", b.Configuration(), last, b.SustainedText(), upTo)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", b.Configuration(), b.Level(), strings.Join(b.Rules, ","), last, b.SustainedText(), joinOr(b.Details, ""))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if parity := Parity(steps); len(parity) > 0 {
		if err := formatParity(w, parity); err != nil {
			return err
		}
	}

	if invalid > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "invalid steps (excluded from statistics; `orchbench sweep --resume %s` runs them again):\n", rec.ID)
		for _, r := range steps {
			if r.Outcome == OutcomeInvalid {
				fmt.Fprintf(w, "  %s: %s\n", r.Step, joinOr(r.Reasons, "no reason recorded"))
			}
		}
	}
	return nil
}

// formatParity prints the parity table of a sweep over several
// orchestrators, mismatches first called out.
func formatParity(w io.Writer, rows []ParityRow) error {
	orchs := ParityOrchestrators(rows)
	fmt.Fprintln(w)
	if m := Mismatches(rows); len(m) > 0 {
		fmt.Fprintf(w, "PARITY: %d mismatch(es) other than the orchestrator:\n", len(m))
		for _, r := range m {
			var vs []string
			for _, o := range orchs {
				vs = append(vs, o+" "+orNone(r.Values[o]))
			}
			fmt.Fprintf(w, "  %s/%s %s: %s\n", r.App, r.Variant, r.Aspect, strings.Join(vs, "; "))
		}
	} else {
		fmt.Fprintf(w, "parity: no mismatch other than the orchestrator (%s)\n", strings.Join(orchs, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "APP/VARIANT\tASPECT\t%s\t\n", strings.ToUpper(strings.Join(orchs, "\t")))
	for _, r := range rows {
		verdict := "equal"
		switch {
		case r.Mismatch:
			verdict = "MISMATCH"
		case r.Inherent:
			verdict = "differs by nature"
		}
		var vs []string
		for _, o := range orchs {
			vs = append(vs, orNone(r.Values[o]))
		}
		if r.Basis != "" {
			verdict += " (over " + r.Basis + ")"
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\n", r.App, r.Variant, r.Aspect, strings.Join(vs, "\t"), verdict)
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func p99Text(ms float64) string {
	if ms <= 0 {
		return "(none)"
	}
	return fmt.Sprint(ms)
}
