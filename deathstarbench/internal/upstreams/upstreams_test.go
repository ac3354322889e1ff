package upstreams

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestStaleUpstreamsNamesWhatTheFileChanged(t *testing.T) {
	started := map[string]string{"USER_ADDR": "127.0.0.1:1", "REDIS_ADDR": "127.0.0.1:6379"}
	file := []byte("# rendered by Nomad\nUSER_ADDR=127.0.0.1:30913\n\nREDIS_ADDR=127.0.0.1:6379\nMONGODB_URI=mongodb://127.0.0.1:24063/\n")
	values, stale := staleUpstreams(file, func(k string) string { return started[k] })
	if want := []string{"MONGODB_URI", "USER_ADDR"}; !slices.Equal(stale, want) {
		t.Fatalf("stale %v, want %v", stale, want)
	}
	if values["MONGODB_URI"] != "mongodb://127.0.0.1:24063/" || len(values) != 3 {
		t.Fatalf("values %v", values)
	}
	env := withValues([]string{"USER_ADDR=127.0.0.1:1", "PATH=/bin", "REDIS_ADDR=127.0.0.1:6379"}, values)
	slices.Sort(env)
	if want := []string{"MONGODB_URI=mongodb://127.0.0.1:24063/", "PATH=/bin", "REDIS_ADDR=127.0.0.1:6379", "USER_ADDR=127.0.0.1:30913"}; !slices.Equal(env, want) {
		t.Fatalf("env %v, want %v", env, want)
	}
	if _, stale := staleUpstreams(file, func(k string) string { return values[k] }); len(stale) != 0 {
		t.Fatalf("a process started with the file's values is stale on %v", stale)
	}
}

// The watcher leaves a process alone while the file agrees with its
// environment, and restarts it once the file is re-rendered with an
// address it did not start with.
func TestWatchUpstreamsRestartsOnceTheFileChanges(t *testing.T) {
	t.Setenv("SOCIAL_GRAPH_ADDR", "127.0.0.1:1")
	path := filepath.Join(t.TempDir(), "upstreams.env")
	if err := os.WriteFile(path, []byte("SOCIAL_GRAPH_ADDR=127.0.0.1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	restarted := make(chan []string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, path, 10*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, func(env []string) error {
			restarted <- env
			return nil
		})
	}()
	select {
	case <-restarted:
		t.Fatal("restarted while the file agreed with the environment")
	case <-time.After(100 * time.Millisecond):
	}
	if err := os.WriteFile(path, []byte("SOCIAL_GRAPH_ADDR=127.0.0.1:28221\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case env := <-restarted:
		if !slices.Contains(env, "SOCIAL_GRAPH_ADDR=127.0.0.1:28221") {
			t.Fatalf("restarted without the new address: %v", env)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not restarted within 5 s of the file changing")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Where the orchestrator renders no file (Swarm, Kubernetes), the watcher
// returns at once instead of polling for a file that never comes.
func TestWatchUpstreamsWithoutAFileWatchesNothing(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		done <- Watch(context.Background(), filepath.Join(t.TempDir(), "none.env"), time.Millisecond,
			slog.New(slog.NewTextHandler(io.Discard, nil)), nil, func([]string) error { t.Error("restarted"); return nil })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("still watching a file that does not exist")
	}
}

// An upstream service's new addresses are applied in place, again at each
// change, with no restart; a store's address, read only at start, still
// makes the process start again, with every value of the file.
func TestWatchUpstreamsAppliesServiceAddressesInPlace(t *testing.T) {
	t.Setenv("SOCIAL_GRAPH_ADDR", "10.0.0.1:1")
	t.Setenv("REDIS_ADDR", "10.0.0.9:6379")
	path := filepath.Join(t.TempDir(), "upstreams.env")
	write := func(body string) {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("SOCIAL_GRAPH_ADDR=10.0.0.1:1\nREDIS_ADDR=10.0.0.9:6379\n")
	applied := make(chan string, 4)
	restarted := make(chan []string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Watch(context.Background(), path, 5*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)),
			func(key, value string) bool {
				if key != "SOCIAL_GRAPH_ADDR" {
					return false
				}
				applied <- value
				return true
			},
			func(env []string) error { restarted <- env; return nil })
	}()
	for _, addrs := range []string{"10.0.0.1:1,10.0.0.2:1", "10.0.0.2:1,10.0.0.3:1"} {
		write("SOCIAL_GRAPH_ADDR=" + addrs + "\nREDIS_ADDR=10.0.0.9:6379\n")
		select {
		case got := <-applied:
			if got != addrs {
				t.Fatalf("applied %q, want %q", got, addrs)
			}
		case env := <-restarted:
			t.Fatalf("restarted for a service's addresses: %v", env)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s not applied within 5 s", addrs)
		}
	}
	select {
	case got := <-applied:
		t.Fatalf("applied %q again with the file unchanged", got)
	case <-time.After(50 * time.Millisecond):
	}
	write("SOCIAL_GRAPH_ADDR=10.0.0.2:1,10.0.0.3:1\nREDIS_ADDR=10.0.0.8:6379\n")
	select {
	case env := <-restarted:
		if !slices.Contains(env, "REDIS_ADDR=10.0.0.8:6379") || !slices.Contains(env, "SOCIAL_GRAPH_ADDR=10.0.0.2:1,10.0.0.3:1") {
			t.Errorf("started again without the file's values: %v", env)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a store's new address did not start the process again")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
