package store

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/testutil"
)

// memcachedServer runs a real memcached on loopback until the test ends.
func memcachedServer(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("memcached")
	if err != nil {
		testenv.Missing(t, "memcached not installed (`just tools` installs it): %v", err)
	}
	addr := testutil.FreeAddr(t)
	cmd := exec.Command(bin, "-l", "127.0.0.1", "-p", strings.Split(addr, ":")[1], "-U", "0", "-m", "16", "-u", "nobody")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testutil.WaitTCP(t, "memcached", addr, 10*time.Second)
	return addr
}

// Five parts of a review meet at a counter: whatever their order, exactly
// one caller sees it reach five, and a part added twice is refused.
func testRendezvous(t *testing.T, r Rendezvous) {
	ctx := context.Background()
	if _, err := r.Increment(ctx, "7:counter", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("increment of a missing counter: %v, want ErrNotFound", err)
	}
	if added, err := r.Add(ctx, "7:text", []byte("hello"), 10*time.Second); !added || err != nil {
		t.Fatalf("first add: %v, %v", added, err)
	}
	if added, err := r.Add(ctx, "7:text", []byte("again"), 10*time.Second); added || err != nil {
		t.Fatalf("second add of one key: added %v, %v", added, err)
	}
	if got, _ := r.GetMulti(ctx, []string{"7:text"}); string(got["7:text"]) != "hello" {
		t.Fatalf("the second add overwrote the first: %q", got["7:text"])
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen []uint64
	)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Add(ctx, "7:counter", []byte("0"), 10*time.Second); err != nil {
				t.Error(err)
				return
			}
			n, err := r.Increment(ctx, "7:counter", 1)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen = append(seen, n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(seen)
	if !slices.Equal(seen, []uint64{1, 2, 3, 4, 5}) {
		t.Fatalf("counter values %v, want each of 1..5 once", seen)
	}
}

func TestMemcachedRendezvous(t *testing.T) {
	m := NewMemcached([]string{memcachedServer(t)}, 4)
	defer m.Close()
	testRendezvous(t, m)
}

func TestMemoryRendezvous(t *testing.T) { testRendezvous(t, NewMemoryCache()) }

func testTallies(t *testing.T, tallies Tallies) {
	ctx := context.Background()
	for _, rating := range []int64{7, 3, 10} {
		if err := tallies.IncrBy(ctx, map[string]int64{"m1:uncommit_sum": rating, "m1:uncommit_num": 1}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tallies.Ints(ctx, []string{"m1:uncommit_sum", "m1:uncommit_num", "m2:uncommit_sum"})
	if err != nil || !slices.Equal(got, []int64{20, 3, 0}) {
		t.Fatalf("tallies %v, %v; want sum 20, count 3, and 0 for a movie never rated", got, err)
	}
}

func TestRedisTallies(t *testing.T) {
	r := NewRedis(redisServer(t), 4)
	defer r.Close()
	testTallies(t, r)
}

func TestMemoryTallies(t *testing.T) { testTallies(t, NewMemoryCache()) }
