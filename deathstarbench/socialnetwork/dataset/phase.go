package dataset

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultProgressEvery is how often a running phase reports: often enough
// that a phase of many minutes (the follow phase on FerretDB) shows it is
// moving and when it will end.
const DefaultProgressEvery = 10 * time.Second

type outcome int

const (
	succeeded outcome = iota
	skipped
	failed
)

const keptErrors = 5

// phase describes one pass of the loader over n tasks.
type phase struct {
	name    string
	unit    string // what a task is, for the progress line: "users", "follows"
	total   int
	workers int
	// every and report give the progress lines; report may be nil.
	every  time.Duration
	report func(string)
	// extra, if set, adds a running count to each progress line (the posts
	// of the compose phase, whose tasks are users).
	extra func() string
}

// runPhase runs task(0..total-1) on p.workers goroutines, counts outcomes,
// and reports progress every p.every while it runs.
func runPhase(ctx context.Context, p phase, task func(i int) (outcome, string)) PhaseResult {
	started := time.Now()
	var (
		result  PhaseResult
		mu      sync.Mutex
		next    atomic.Int64
		wg      sync.WaitGroup
		ok      atomic.Int64
		skip    atomic.Int64
		failure atomic.Int64
	)
	stopReporting := reportEvery(p, func() string {
		line := progressLine(p.name, p.unit, ok.Load()+skip.Load()+failure.Load(), failure.Load(), int64(p.total), time.Since(started))
		if p.extra != nil {
			line += ", " + p.extra()
		}
		return line
	})
	for range min(max(p.workers, 1), max(p.total, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= p.total {
					return
				}
				switch what, message := task(i); what {
				case succeeded:
					ok.Add(1)
				case skipped:
					skip.Add(1)
				default:
					failure.Add(1)
					mu.Lock()
					if len(result.FirstErrors) < keptErrors {
						result.FirstErrors = append(result.FirstErrors, strings.TrimSpace(message))
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	stopReporting()
	result.OK, result.Skipped, result.Failed = ok.Load(), skip.Load(), failure.Load()
	result.Duration = time.Since(started)
	return result
}

// reportEvery calls p.report(line()) every p.every until the returned stop
// is called; stop waits for a report under way, so no line of a phase
// comes after its closing line.
func reportEvery(p phase, line func() string) (stop func()) {
	if p.report == nil || p.every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(p.every)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				p.report(line())
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// progressLine says how far a phase is, how fast it goes and, at that
// rate, how long the rest takes.
func progressLine(name, unit string, done, failures, total int64, elapsed time.Duration) string {
	percent := 100.0
	if total > 0 {
		percent = 100 * float64(done) / float64(total)
	}
	line := fmt.Sprintf("%s: %d/%d %s (%.1f%%), %d failed", name, done, total, unit, percent, failures)
	if done == 0 || elapsed <= 0 {
		return line + ", 0.0/s, ETA unknown"
	}
	rate := float64(done) / elapsed.Seconds()
	left := time.Duration(float64(total-done) / rate * float64(time.Second))
	return line + fmt.Sprintf(", %.1f/s, ETA %s", rate, left.Round(time.Second))
}
