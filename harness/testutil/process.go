package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Process is a program an end-to-end test runs as a process of its own,
// stopped and started again at will (a service killed as an OOM kill would,
// a store restarted empty). Its output goes to logDir/<name>.log, one log
// across its runs; it is stopped when the test ends, and the log's tail is
// shown if the test failed, since the test's own message rarely says why a
// service answered 500.
type Process struct {
	t    testing.TB
	name string
	path string
	args []string
	env  []string
	log  *os.File
	cmd  *exec.Cmd
	done chan struct{}
}

// NewProcess prepares path with args, and env added to the test's own
// environment; Start runs it.
func NewProcess(t testing.TB, logDir, name string, env []string, path string, args ...string) *Process {
	t.Helper()
	log, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{t: t, name: name, path: path, args: args, env: env, log: log}
	t.Cleanup(func() {
		p.Stop(os.Interrupt)
		log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("--- %s log (tail) ---\n%s", name, Tail(string(data), 2000))
		}
	})
	return p
}

// Start runs the program; a run before must have been stopped.
func (p *Process) Start() {
	p.t.Helper()
	if p.cmd != nil {
		p.t.Fatalf("start %s: it is running", p.name)
	}
	fmt.Fprintf(p.log, "--- start %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
}

// Stop sends sig and waits for the process to end, killing it after 5 s; a
// process not running is left as it is.
func (p *Process) Stop(sig os.Signal) {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
	fmt.Fprintf(p.log, "--- stopped %s (%v)\n", time.Now().Format(time.RFC3339Nano), sig)
	p.cmd = nil
}
