package uniqueid

import (
	"sync"
	"testing"
	"time"
)

func TestGeneratorUniqueAndOrdered(t *testing.T) {
	gen := New(5)
	const perWorker, workers = 5000, 4
	ids := make(chan int64, perWorker*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWorker {
				ids <- gen.Next()
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if id <= 0 {
			t.Fatalf("id %d is not positive", id)
		}
		if seen[id] {
			t.Fatalf("id %d issued twice", id)
		}
		seen[id] = true
	}
	a, b := gen.Next(), gen.Next()
	if b <= a {
		t.Fatalf("ids not increasing: %d then %d", a, b)
	}
}

func TestGeneratorLayout(t *testing.T) {
	gen := New(1023)
	fixed := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	gen.now = func() time.Time { return fixed }
	first := gen.Next()
	second := gen.Next()
	ts, machine, counter := Split(first)
	if !ts.Equal(fixed) || machine != 1023 || counter != 0 {
		t.Fatalf("Split(first) = %v, %d, %d", ts, machine, counter)
	}
	if _, _, counter := Split(second); counter != 1 {
		t.Fatalf("second id in the same millisecond has counter %d, want 1", counter)
	}
	// A clock stepping back must not produce smaller (possibly reused) IDs.
	gen.now = func() time.Time { return fixed.Add(-time.Second) }
	if third := gen.Next(); third <= second {
		t.Fatalf("after clock step back: %d <= %d", third, second)
	}
	// Exhausting the counter borrows the next millisecond.
	gen.now = func() time.Time { return fixed }
	var last int64
	for range maxCounter + 10 {
		next := gen.Next()
		if next <= last {
			t.Fatalf("not increasing under counter overflow: %d after %d", next, last)
		}
		last = next
	}
}
