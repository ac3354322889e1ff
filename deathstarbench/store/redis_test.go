package store

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/testutil"
)

// redisServer runs a real redis-server on loopback until the test ends.
func redisServer(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Missing(t, "redis-server not installed (`just tools` installs it): %v", err)
	}
	addr := testutil.FreeAddr(t)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strings.Split(addr, ":")[1], "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return addr
}

// While a lost node's Redis is replaced, its orchestrator lists both the
// dead instance and the new one: the client reaches the one that answers,
// wherever it stands in the list; when none answers, the error names them.
func TestRedisListReachesTheInstanceThatAnswers(t *testing.T) {
	live := redisServer(t)
	dead := testutil.FreeAddr(t) // nothing listens there
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, list := range []string{dead + "," + live, live + "," + dead} {
		r := NewRedis(list, 2)
		if err := r.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
			t.Fatalf("%s: set: %v", list, err)
		}
		got, err := r.GetMulti(ctx, []string{"k"})
		if err != nil || string(got["k"]) != "v" {
			t.Errorf("%s: get %q, %v", list, got["k"], err)
		}
		r.client.Close()
	}
	r := NewRedis(dead+","+testutil.FreeAddr(t), 2)
	defer r.client.Close()
	if err := r.Set(ctx, "k", []byte("v"), time.Minute); err == nil || !strings.Contains(err.Error(), "no Redis of "+dead) {
		t.Errorf("no instance answering: %v", err)
	}
}
