//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices"
	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/testutil"
)

// builds holds the binaries, built once for every test of the package.
var builds *testutil.GoBuilds

func TestMain(m *testing.M) {
	b, err := testutil.NewGoBuilds("mediamicro-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builds = b
	code := m.Run()
	b.Remove()
	os.Exit(code)
}

func requireBinary(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		testenv.Missing(t, "%s not installed (`just tools` installs redis-server and memcached): %v", name, err)
	}
	return path
}

// stack is a running media microservices on one FerretDB, one memcached
// and one Redis.
type stack struct {
	t             *testing.T
	frontend      string // base URL
	mongoURI      string
	memcachedAddr string
	redisAddr     string
	redis         *testutil.Process
	addrs         map[string]string // service -> host:port
	services      map[string]*testutil.Process
}

// on is the stack for subtest t: a subtest must fail itself, not its
// parent.
func (s *stack) on(t *testing.T) *stack {
	c := *s
	c.t = t
	return &c
}

// startStack runs FerretDB, memcached, redis-server and the fourteen
// services, one process each, on loopback until the test ends.
func startStack(t *testing.T) *stack {
	t.Helper()
	memcached := requireBinary(t, "memcached")
	redisServer := requireBinary(t, "redis-server")
	mediamicro := builds.Build(t, "deathstarbench/cmd/mediamicro")
	ferretdb := builds.Build(t, "deathstarbench/cmd/ferretdb")
	dataDir, logDir := t.TempDir(), t.TempDir()

	memcachedAddr, redisAddr, ferretAddr := testutil.FreeAddr(t), testutil.FreeAddr(t), testutil.FreeAddr(t)
	_, memcachedPort, _ := net.SplitHostPort(memcachedAddr)
	_, redisPort, _ := net.SplitHostPort(redisAddr)
	testutil.NewProcess(t, logDir, "memcached", nil, memcached, "-l", "127.0.0.1", "-p", memcachedPort, "-U", "0", "-u", "root", "-m", "64").Start()
	testutil.NewProcess(t, logDir, "ferretdb", nil, ferretdb, "--listen-addr", ferretAddr, "--data-dir", filepath.Join(dataDir, "ferretdb")).Start()
	// No persistence, as the pack runs it: a restart starts empty.
	redis := testutil.NewProcess(t, logDir, "redis", nil, redisServer, "--bind", "127.0.0.1", "--port", redisPort,
		"--save", "", "--appendonly", "no", "--dir", dataDir)
	redis.Start()
	testutil.WaitTCP(t, "memcached", memcachedAddr, 60*time.Second)
	testutil.WaitTCP(t, "redis", redisAddr, 60*time.Second)
	testutil.WaitTCP(t, "ferretdb", ferretAddr, 60*time.Second)

	s := &stack{
		t:             t,
		mongoURI:      "mongodb://" + ferretAddr + "/",
		memcachedAddr: memcachedAddr,
		redisAddr:     redisAddr,
		redis:         redis,
		addrs:         map[string]string{},
		services:      map[string]*testutil.Process{},
	}
	for _, name := range mediamicroservices.ServiceNames() {
		s.addrs[name] = testutil.FreeAddr(t)
	}
	for i, name := range mediamicroservices.ServiceNames() {
		args := []string{"--service", name, "--listen-addr", s.addrs[name], "--log-level", "warn",
			"--machine-id", strconv.Itoa(i)}
		for _, kind := range mediamicroservices.Storage[name] {
			switch kind {
			case "mongodb":
				args = append(args, "--mongodb-uri", s.mongoURI)
			case "memcached":
				args = append(args, "--memcached-addr", memcachedAddr)
			case "redis":
				args = append(args, "--redis-addr", redisAddr)
			}
		}
		for _, upstream := range mediamicroservices.Upstreams[name] {
			args = append(args, "--"+upstream+"-addr", s.addrs[upstream])
		}
		s.services[name] = testutil.NewProcess(t, logDir, name, nil, mediamicro, args...)
	}
	// Run before each process's own cleanup: a Thrift service waits up to
	// 2 s on stopping for its callers' pooled connections to close, so
	// stopped one by one the services would take half a minute.
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, p := range s.services {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.Stop(os.Interrupt)
			}()
		}
		wg.Wait()
	})
	s.frontend = "http://" + s.addrs[mediamicroservices.ServiceFrontend]
	started := time.Now()
	s.startServices(mediamicroservices.ServiceNames()...)
	t.Logf("%d services listening %s after start", len(s.services), time.Since(started).Round(time.Millisecond))
	return s
}

// startServices starts the named services and waits until each listens: a
// service listens once its stores answer.
func (s *stack) startServices(names ...string) {
	s.t.Helper()
	for _, name := range names {
		s.services[name].Start()
	}
	for _, name := range names {
		testutil.WaitTCP(s.t, name, s.addrs[name], 60*time.Second)
	}
	if status, body := s.get("/healthz"); status != http.StatusOK {
		s.t.Fatalf("/healthz: %d %q", status, body)
	}
}

// kill ends a service with SIGKILL, as an OOM kill does.
func (s *stack) kill(name string) { s.services[name].Stop(syscall.SIGKILL) }

// restartRedis kills redis-server and starts it again: with no
// persistence it comes back empty, as the pack's Redis task does.
func (s *stack) restartRedis() {
	s.t.Helper()
	s.redis.Stop(syscall.SIGKILL)
	s.redis.Start()
	testutil.WaitTCP(s.t, "redis", s.redisAddr, 60*time.Second)
	if reply := testutil.RedisCommand(s.t, s.redisAddr, "DBSIZE"); reply != ":0" {
		s.t.Fatalf("redis after a restart holds keys: DBSIZE %s", reply)
	}
}

// waitAnswers waits, for at most 30 s, until GET path answers 200: the
// connections of the services to a restarted process are found broken
// and dialled again on use.
func (s *stack) waitAnswers(path string) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := s.do(http.MethodGet, path, "", "")
		if status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("GET %s answers no 200 within 30 s: %d %q", path, status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var client = &http.Client{
	Timeout:   60 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64},
}

// do sends one request to the front end; a failed request is status 0 with
// the error as the body.
func (s *stack) do(method, path, contentType, body string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.frontend+path, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(data)
}

// get is GET path; a request that fails to get an answer fails the test.
func (s *stack) get(path string) (int, string) {
	s.t.Helper()
	status, body := s.do(http.MethodGet, path, "", "")
	if status == 0 {
		s.t.Fatalf("GET %s: %s", path, body)
	}
	return status, body
}

// getJSON is GET path answered 200, its body decoded into out.
func (s *stack) getJSON(path string, out any) {
	s.t.Helper()
	status, body := s.get(path)
	if status != http.StatusOK {
		s.t.Fatalf("GET %s: %d %q, want 200", path, status, testutil.Tail(body, 500))
	}
	if err := json.Unmarshal([]byte(body), out); err != nil {
		s.t.Fatalf("GET %s: %v in %q", path, err, testutil.Tail(body, 500))
	}
}

// compose posts a review form; safe from several goroutines, so it does not
// fail the test itself.
func (s *stack) compose(form url.Values) (int, string) {
	return s.do(http.MethodPost, "/wrk2-api/review/compose", "application/x-www-form-urlencoded", form.Encode())
}
