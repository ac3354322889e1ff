package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// proc is one process of the stack under measurement.
type proc struct {
	name string
	cmd  *exec.Cmd
	// withChildren counts the CPU of the process's children too: a
	// PostgreSQL server works in one backend process per connection.
	withChildren bool
}

// cpuSeconds is the user+system CPU the process (and, withChildren, its
// live and reaped children) has used so far.
func (p *proc) cpuSeconds() (float64, error) {
	ticks, err := statTicks(p.cmd.Process.Pid, p.withChildren)
	if err != nil || !p.withChildren {
		return float64(ticks) / clockTicks, err
	}
	children, err := childPIDs(p.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	for _, child := range children {
		t, err := statTicks(child, false)
		if err != nil {
			continue // exited since listed: its time is in the parent's reaped total
		}
		ticks += t
	}
	return float64(ticks) / clockTicks, nil
}

// statTicks reads utime+stime, and with reaped cutime+cstime, of pid.
func statTicks(pid int, reaped bool) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces and parentheses; fields resume
	// after its last ')' with field 3 (state).
	end := strings.LastIndexByte(string(raw), ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(raw[end+1:]))
	last := 15 // stime is field 15, index 12 here
	if reaped {
		last = 17
	}
	if len(fields) < last-2 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	var total int64
	for field := 14; field <= last; field++ {
		n, err := strconv.ParseInt(fields[field-3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat field %d: %w", pid, field, err)
		}
		total += n
	}
	return total, nil
}

// childPIDs lists pid's children from /proc/<pid>/task/*/children.
func childPIDs(pid int) ([]int, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, path := range tasks {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(raw)) {
			if child, err := strconv.Atoi(field); err == nil {
				pids = append(pids, child)
			}
		}
	}
	return pids, nil
}

// freePort returns a TCP port on 127.0.0.1 free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs a process with its output in dir/<name>.log.
func start(dir, name string, cred *syscall.Credential, path string, args ...string) (*proc, error) {
	logFile, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so a stop reaches no one else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { cmd.Wait(); logFile.Close() }()
	return &proc{name: name, cmd: cmd}, nil
}

// stop asks the process to end and kills it after grace.
func (p *proc) stop(grace time.Duration) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if err := p.cmd.Process.Signal(syscall.Signal(0)); errors.Is(err, os.ErrProcessDone) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = p.cmd.Process.Kill()
}

// waitTCP waits until addr accepts connections.
func waitTCP(ctx context.Context, addr string) error {
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never accepted a connection: %w", addr, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
