package dataset

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultProgressEvery is how often a running phase reports: on FerretDB
// a phase takes minutes, and a silent one looks stuck.
const DefaultProgressEvery = 10 * time.Second

// PhaseResult counts one phase's requests.
type PhaseResult struct {
	// Name is the phase ("users", "movies", "cast-info", "plots",
	// "movie-info"), Total its request count.
	Name  string
	Total int
	// Present counts registrations answered "already existed".
	OK, Present, Failed int
	Duration            time.Duration
	// FirstErrors keeps the first few failures: the request and its answer.
	FirstErrors []string
}

// keptErrors bounds PhaseResult.FirstErrors: a front end that is down
// fails every request the same way.
const keptErrors = 5

// taskResult is what one request of a phase came to.
type taskResult int

const (
	done taskResult = iota
	present
	failure
)

// runPhase sends task(0..total-1) from workers goroutines. While it runs it
// reports every `every` how far it is, and at the end one closing line.
func runPhase(ctx context.Context, name string, total, workers int, every time.Duration, report func(string), task func(ctx context.Context, i int) (taskResult, string)) PhaseResult {
	started := time.Now()
	var (
		next                 atomic.Int64
		ok, already, failed  atomic.Int64
		mu                   sync.Mutex
		firstErrors          []string
		wg                   sync.WaitGroup
		stopTicker, finished = make(chan struct{}), make(chan struct{})
	)
	go func() {
		defer close(finished)
		if report == nil || every <= 0 {
			return
		}
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			select {
			case <-stopTicker:
				return
			case <-ticker.C:
				report(progressLine(name, ok.Load()+already.Load()+failed.Load(), failed.Load(), int64(total), time.Since(started)))
			}
		}
	}()
	for range min(max(workers, 1), max(total, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				switch result, problem := task(ctx, i); result {
				case done:
					ok.Add(1)
				case present:
					already.Add(1)
				default:
					failed.Add(1)
					mu.Lock()
					if len(firstErrors) < keptErrors {
						firstErrors = append(firstErrors, problem)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	// The closing line must be the phase's last.
	close(stopTicker)
	<-finished
	r := PhaseResult{Name: name, Total: total, OK: int(ok.Load()), Present: int(already.Load()), Failed: int(failed.Load()),
		Duration: time.Since(started), FirstErrors: firstErrors}
	if report != nil {
		report(fmt.Sprintf("%s: %d ok, %d already present, %d failed of %d in %s", name, r.OK, r.Present, r.Failed, total, r.Duration.Round(time.Millisecond)))
	}
	return r
}

// progressLine is a running phase's count, rate and, at that rate, the
// time left; the social network's loader prints the same shape.
func progressLine(name string, sent, failed, total int64, elapsed time.Duration) string {
	percent := 100.0
	if total > 0 {
		percent = 100 * float64(sent) / float64(total)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d/%d (%.1f%%), %d failed", name, sent, total, percent, failed)
	if sent == 0 || elapsed <= 0 {
		b.WriteString(", 0.0/s, ETA unknown")
		return b.String()
	}
	rate := float64(sent) / elapsed.Seconds()
	fmt.Fprintf(&b, ", %.1f/s, ETA %s", rate, time.Duration(float64(total-sent)/rate*float64(time.Second)).Round(time.Second))
	return b.String()
}
