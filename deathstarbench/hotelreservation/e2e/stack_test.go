//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation"
	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/testutil"
)

// builds holds the binaries, built once for every test of the package.
var builds *testutil.GoBuilds

func TestMain(m *testing.M) {
	b, err := testutil.NewGoBuilds("hotelres-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builds = b
	code := m.Run()
	b.Remove()
	os.Exit(code)
}

// memcachedBinary finds Debian's memcached, as the social network's e2e
// does; missing, the test skips (fails when strict).
func memcachedBinary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("memcached")
	if err != nil {
		testenv.Missing(t, "memcached not installed (apt-get install -y memcached, or `just tools`): %v", err)
	}
	return path
}

// stack is a running hotel reservation on FerretDB and memcached.
type stack struct {
	t             *testing.T
	frontend      string // base URL
	mongoURI      string
	memcachedAddr string
	addrs         map[string]string // service -> host:port
	services      map[string]*testutil.Process
}

// startStack runs FerretDB, memcached and the eight services, one process
// each, on loopback until the test ends.
func startStack(t *testing.T) *stack {
	t.Helper()
	memcached := memcachedBinary(t)
	hotelres := builds.Build(t, "deathstarbench/cmd/hotelres")
	ferretdb := builds.Build(t, "deathstarbench/cmd/ferretdb")
	dataDir, logDir := t.TempDir(), t.TempDir()

	memcachedAddr, ferretAddr := testutil.FreeAddr(t), testutil.FreeAddr(t)
	_, memcachedPort, _ := net.SplitHostPort(memcachedAddr)
	testutil.NewProcess(t, logDir, "memcached", nil, memcached, "-l", "127.0.0.1", "-p", memcachedPort, "-U", "0", "-u", "root", "-m", "64").Start()
	testutil.NewProcess(t, logDir, "ferretdb", nil, ferretdb, "--listen-addr", ferretAddr, "--data-dir", filepath.Join(dataDir, "ferretdb")).Start()
	testutil.WaitTCP(t, "memcached", memcachedAddr, 60*time.Second)
	testutil.WaitTCP(t, "ferretdb", ferretAddr, 60*time.Second)

	s := &stack{
		t:             t,
		mongoURI:      "mongodb://" + ferretAddr + "/",
		memcachedAddr: memcachedAddr,
		addrs:         map[string]string{},
		services:      map[string]*testutil.Process{},
	}
	for _, name := range hotelreservation.ServiceNames() {
		s.addrs[name] = testutil.FreeAddr(t)
	}
	for _, name := range hotelreservation.ServiceNames() {
		args := []string{"--service", name, "--listen-addr", s.addrs[name],
			"--mongodb-uri", s.mongoURI, "--memcached-addr", memcachedAddr, "--log-level", "warn"}
		for _, upstream := range hotelreservation.Upstreams[name] {
			args = append(args, "--"+upstream+"-addr", s.addrs[upstream])
		}
		s.services[name] = testutil.NewProcess(t, logDir, name, nil, hotelres, args...)
	}
	s.frontend = "http://" + s.addrs[hotelreservation.ServiceFrontend]
	started := time.Now()
	s.startServices(hotelreservation.ServiceNames()...)
	t.Logf("8 services serving %s after start", time.Since(started).Round(time.Millisecond))
	return s
}

// startServices starts the named services and waits until each listens
// (a service listens once its data is seeded and read) and the front end
// answers a search.
func (s *stack) startServices(names ...string) {
	s.t.Helper()
	for _, name := range names {
		s.services[name].Start()
	}
	for _, name := range names {
		testutil.WaitTCP(s.t, name, s.addrs[name], 60*time.Second)
	}
	s.waitServing()
}

// waitServing waits, for at most 30 s, until a search through the front
// end answers 200: its channels to a restarted service reconnect after a
// back-off.
func (s *stack) waitServing() {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := s.getErr("/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7867&lon=-122.4112")
		if status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the front end answers no search within 30 s: %d %q", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

// getErr gets path from the front end; a failed request is status 0.
func (s *stack) getErr(path string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.frontend+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(body)
}

func (s *stack) get(path string) (int, string) {
	s.t.Helper()
	status, body := s.getErr(path)
	if status == 0 {
		s.t.Fatalf("GET %s: %s", path, body)
	}
	return status, body
}

// kill ends a service with SIGKILL, as an OOM kill does.
func (s *stack) kill(name string) { s.services[name].Stop(syscall.SIGKILL) }

// stopAll stops every service with SIGINT.
func (s *stack) stopAll() {
	for _, name := range hotelreservation.ServiceNames() {
		s.services[name].Stop(os.Interrupt)
	}
}
