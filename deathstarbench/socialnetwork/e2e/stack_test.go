//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork"
	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/testutil"
)

// builds holds the binaries, built once for every test of the package.
var builds *testutil.GoBuilds

func TestMain(m *testing.M) {
	b, err := testutil.NewGoBuilds("socialnet-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builds = b
	code := m.Run()
	b.Remove()
	os.Exit(code)
}

// start runs a process until the test ends, logging its output to logDir.
func start(t *testing.T, logDir, name string, env []string, path string, args ...string) {
	t.Helper()
	logFile, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logFile.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logFile.Name())
			t.Logf("--- %s log (tail) ---\n%s", name, testutil.Tail(string(data), 2000))
		}
	})
}

func requireBinary(t *testing.T, name string) string {
	path, err := exec.LookPath(name)
	if err != nil {
		testenv.Missing(t, "%s not installed (`just tools` installs redis-server and memcached): %v", name, err)
	}
	return path
}

// stack is a running social network on the real tiers.
type stack struct {
	frontend      string // base URL
	frontendAddr  string // host:port
	redisAddr     string
	memcachedAddr string
}

// startStack runs redis-server, memcached, FerretDB and the twelve
// services as separate processes on loopback until the test ends.
func startStack(t *testing.T) stack {
	t.Helper()
	redisServer := requireBinary(t, "redis-server")
	memcached := requireBinary(t, "memcached")

	dataDir := t.TempDir()
	logDir := t.TempDir()
	socialnet := builds.Build(t, "deathstarbench/cmd/socialnet")
	ferretdb := builds.Build(t, "deathstarbench/cmd/ferretdb")

	redisAddr := testutil.FreeAddr(t)
	memcachedAddr := testutil.FreeAddr(t)
	ferretAddr := testutil.FreeAddr(t)
	start(t, logDir, "redis", nil, redisServer, "--bind", "127.0.0.1", "--port", strings.Split(redisAddr, ":")[1],
		"--save", "", "--appendonly", "no", "--dir", dataDir)
	start(t, logDir, "memcached", nil, memcached, "-l", "127.0.0.1", "-p", strings.Split(memcachedAddr, ":")[1], "-U", "0", "-u", "root", "-m", "64")
	start(t, logDir, "ferretdb", nil, ferretdb, "--listen-addr", ferretAddr, "--data-dir", filepath.Join(dataDir, "ferretdb"))
	testutil.WaitTCP(t, "redis", redisAddr, 30*time.Second)
	testutil.WaitTCP(t, "memcached", memcachedAddr, 30*time.Second)
	testutil.WaitTCP(t, "ferretdb", ferretAddr, 30*time.Second)

	addrs := map[string]string{}
	for _, name := range socialnetwork.ServiceNames() {
		addrs[name] = testutil.FreeAddr(t)
	}
	env := []string{
		"MONGODB_URI=mongodb://" + ferretAddr + "/",
		"MEMCACHED_ADDR=" + memcachedAddr,
		"REDIS_ADDR=" + redisAddr,
		"JWT_SECRET=e2e-secret",
		"LOG_LEVEL=warn",
		// The replay keeps DeathStarBench's loader's 200 requests in flight
		// against 12 processes and FerretDB on a 2-core machine: calls queue
		// for seconds, and at the tail past 10 s. These tests
		// check what is answered, not how fast, so a call may take as long
		// as the front end gives a whole request (30 s, the default).
		"RPC_CALL_TIMEOUT=30s",
	}
	for name, addr := range addrs {
		env = append(env, socialnetwork.AddrEnv(name)+"="+addr)
	}
	started := time.Now()
	for i, name := range socialnetwork.ServiceNames() {
		start(t, logDir, name, append(env, fmt.Sprintf("MACHINE_ID=%d", i)), socialnet, "--service", name, "--listen-addr", addrs[name])
	}
	for _, name := range socialnetwork.ServiceNames() {
		testutil.WaitTCP(t, name, addrs[name], 30*time.Second)
	}
	t.Logf("12 services listening %s after start", time.Since(started).Round(time.Millisecond))
	return stack{
		frontend:      "http://" + addrs[socialnetwork.ServiceFrontend],
		frontendAddr:  addrs[socialnetwork.ServiceFrontend],
		redisAddr:     redisAddr,
		memcachedAddr: memcachedAddr,
	}
}

// flushRedis empties Redis, as a restart of the pack's Redis task does.
func flushRedis(t *testing.T, addr string) {
	if reply := testutil.RedisCommand(t, addr, "FLUSHALL"); reply != "+OK" {
		t.Fatalf("redis FLUSHALL: %q", reply)
	}
}

// redisCard returns how many members the sorted set key has.
func redisCard(t *testing.T, addr, key string) int {
	reply := testutil.RedisCommand(t, addr, "ZCARD "+key)
	n, err := strconv.Atoi(strings.TrimPrefix(reply, ":"))
	if err != nil {
		t.Fatalf("redis ZCARD %s: %q", key, reply)
	}
	return n
}
