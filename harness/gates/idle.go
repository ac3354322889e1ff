package gates

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

// Idle fails a step whose application was still at work when its load was
// to begin. An overloaded step leaves requests queued behind it (at 0.02
// core a service drains them for tens of seconds), and the next step, the
// next repetition's lowest rate after an early stop, would measure that
// backlog as its own latency and errors: not what it declared. The sweep
// waits for every task to settle before the load, up to a bound.
const Idle = "idle"

// A task is busy while it uses more than IdleShare of its declared cores
// and more than IdleFloorCores: an idle service uses next to nothing, and
// the floor keeps a store's housekeeping under a tiny declaration (0.02
// core) from reading as work.
const (
	IdleShare      = 0.25
	IdleFloorCores = 0.01
)

// TaskUse is what one task used over a window just before the load.
type TaskUse struct {
	Task string
	// Cores used over the window; Declared is the task's declared cores
	// (its weight's, for an uncapped task), 0 when it declares none.
	Cores, Declared float64
}

// Busy reports whether the task was still at work.
func (t TaskUse) Busy() bool { return t.Cores > max(IdleShare*t.Declared, IdleFloorCores) }

func (t TaskUse) String() string {
	if t.Declared > 0 {
		return fmt.Sprintf("%s used %.3f cores (%.0f %% of its %.3g declared)", t.Task, t.Cores, 100*t.Cores/t.Declared, t.Declared)
	}
	return fmt.Sprintf("%s used %.3f cores", t.Task, t.Cores)
}

// IdleGate judges the last window read before the load (nil when no task's
// CPU could be read), after waiting waited of bound for the tasks to
// settle.
func IdleGate(last []TaskUse, waited, bound time.Duration) results.Gate {
	g := results.Gate{Name: Idle}
	if len(last) == 0 {
		g.NotChecked = true
		g.Detail = "no task's CPU could be read before the load"
		return g
	}
	var busy []TaskUse
	for _, t := range last {
		if t.Busy() {
			busy = append(busy, t)
		}
	}
	if len(busy) == 0 {
		g.Passed = true
		g.Detail = fmt.Sprintf("%d tasks idle before the load", len(last))
		if waited >= time.Second {
			g.Detail += fmt.Sprintf(", after %s for the work before it to drain", waited.Round(time.Second))
		}
		return g
	}
	slices.SortFunc(busy, func(a, b TaskUse) int {
		switch {
		case a.Cores > b.Cores:
			return -1
		case a.Cores < b.Cores:
			return 1
		}
		return strings.Compare(a.Task, b.Task)
	})
	names := make([]string, 0, 3)
	for _, t := range busy[:min(3, len(busy))] {
		names = append(names, t.String())
	}
	more := ""
	if len(busy) > 3 {
		more = fmt.Sprintf(" and %d more", len(busy)-3)
	}
	g.Detail = fmt.Sprintf("the application was still at work %s after the step was to begin (a backlog from the step before?): %s%s",
		bound.Round(time.Second), strings.Join(names, "; "), more)
	return g
}
