package orchestrator

import (
	"context"
	"fmt"
	"io"
	"time"
)

// WaitUntilHealthy polls check every poll until it reports ready, returns an
// error, or timeout runs out; every adapter's WaitHealthy is this loop
// around its own verdict. A check error ends the wait at once: waiting out
// the timeout would only hide the cause. progress, when set, receives the
// check's state line whenever it changes; a timeout names the last one.
func WaitUntilHealthy(ctx context.Context, orchestrator, job string, timeout, poll time.Duration, progress io.Writer,
	check func(context.Context) (ready bool, state string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	timedOut := func() error {
		return fmt.Errorf("%s: job %s not healthy after %s (last state: %s)", orchestrator, job, timeout, last)
	}
	for {
		ok, state, err := check(ctx)
		if err != nil && ctx.Err() != nil {
			// the bound ran out during a request: say how far it got
			return timedOut()
		}
		if err != nil {
			return err
		}
		if progress != nil && state != last {
			fmt.Fprintf(progress, "job %s: %s\n", job, state)
		}
		last = state
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return timedOut()
		case <-time.After(poll):
		}
	}
}
