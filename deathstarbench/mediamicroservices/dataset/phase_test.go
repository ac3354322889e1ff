package dataset

import (
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		sent, failed, total int64
		elapsed             string
		want                string
	}{
		{50, 2, 200, "10s", "users: 50/200 (25.0%), 2 failed, 5.0/s, ETA 30s"},
		{0, 0, 200, "10s", "users: 0/200 (0.0%), 0 failed, 0.0/s, ETA unknown"},
	} {
		elapsed, _ := time.ParseDuration(c.elapsed)
		if got := progressLine("users", c.sent, c.failed, c.total, elapsed); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
