package snapshot

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// The social graph service writes follow lists behind the follows (see
// deathstarbench/README.md) and loses what is queued when it stops. Nothing
// else writes once the loader has returned, so when FerretDB's files stop
// changing the queue is empty and the files hold every list.
const (
	settleQuiet   = 5 * time.Second
	settleTimeout = 5 * time.Minute
	settlePoll    = 500 * time.Millisecond
)

// settle waits until the files under dir have not changed for settleQuiet.
func settle(ctx context.Context, dir string, say func(string)) error {
	began := time.Now()
	lastSaid := began
	prev, size, err := filesState(dir)
	if err != nil {
		return err
	}
	startSize := size
	changed := began
	for time.Since(changed) < settleQuiet {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settlePoll):
		}
		now, nowSize, err := filesState(dir)
		if err != nil {
			return err
		}
		size = nowSize
		if now != prev {
			prev, changed = now, time.Now()
		}
		if time.Since(began) > settleTimeout {
			return fmt.Errorf("FerretDB's files still change %s after the load ended: the social graph's write-behind does not drain", settleTimeout)
		}
		if time.Since(lastSaid) >= progressEvery {
			lastSaid = time.Now()
			say(fmt.Sprintf("waiting for the social graph's queued list writes: FerretDB's files %.1f MiB (%+.1f MiB so far), last changed %s ago, %s in all",
				float64(size)/(1<<20), float64(size-startSize)/(1<<20), time.Since(changed).Round(time.Second), time.Since(began).Round(time.Second)))
		}
	}
	return nil
}

// filesState names every file's size and modification time, and sums the sizes.
func filesState(dir string) (string, int64, error) {
	var b strings.Builder
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		// SQLite's shared-memory index changes under readers too
		if err != nil || d.IsDir() || strings.HasSuffix(p, "-shm") {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		total += fi.Size()
		return nil
	})
	return b.String(), total, err
}
