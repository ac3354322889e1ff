package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// childEnv makes the test binary act as the orchbench command, so the
// signal tests can run `load` and `loadjob` as real processes (loadjob
// re-executes its own binary, which is then this one).
const childEnv = "ORCHBENCH_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func execLoad(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newLoadCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestLoadRefusesScriptAndWorkload(t *testing.T) {
	_, err := execLoad(t, "-R", "10", "-s", "x.lua", "-w", "get-paths:/a", "http://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), "one or the other") {
		t.Fatalf("want a refusal, got %v", err)
	}
}

func TestLoadUnknownWorkloadListsNames(t *testing.T) {
	_, err := execLoad(t, "-R", "10", "-w", "nosuch", "http://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), "get-paths") {
		t.Fatalf("want the registered names, got %v", err)
	}
}

func TestLoadHostsAndWorkload(t *testing.T) {
	var hits [2]atomic.Int64
	var paths [2]atomic.Int64
	var srv [2]*httptest.Server
	for i := range srv {
		srv[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			if r.URL.Path == "/b" {
				paths[1].Add(1)
			} else if r.URL.Path == "/a" {
				paths[0].Add(1)
			}
			w.Write([]byte("ok"))
		}))
		defer srv[i].Close()
	}
	hosts := strings.TrimPrefix(srv[0].URL, "http://") + "," + strings.TrimPrefix(srv[1].URL, "http://")
	out, err := execLoad(t, "-t1", "-c2", "-d1s", "-R100", "--json", "-w", "get-paths:/a,/b", "--hosts", hosts, srv[0].URL)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res loadgen.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || hits[0].Load() == 0 || hits[1].Load() == 0 {
		t.Fatalf("requests %d, per host %d/%d", res.Requests, hits[0].Load(), hits[1].Load())
	}
	if paths[0].Load() == 0 || paths[1].Load() == 0 || paths[0].Load()+paths[1].Load() != hits[0].Load()+hits[1].Load() {
		t.Fatalf("paths /a %d, /b %d", paths[0].Load(), paths[1].Load())
	}
	if len(res.Config.Hosts) != 2 || res.Config.Workload != "get-paths:/a,/b" {
		t.Fatalf("config echo %+v", res.Config)
	}
}

// slowCounted answers after 200 ms and counts the requests it got, which
// tells a test the child process is generating load.
func slowCounted(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-time.After(200 * time.Millisecond):
		case <-r.Context().Done():
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// startChild runs this binary as `orchbench args...` and waits until the
// server has seen its load, so its signal handling is in place.
func startChild(t *testing.T, hits *atomic.Int64, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(10 * time.Second); hits.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no load from the child:\n%s", out.String())
		}
	}
	return cmd, &out
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want a non-zero exit, got %v", err)
	}
	return ee.ExitCode()
}

func partialResult(t *testing.T, data []byte) loadgen.Result {
	t.Helper()
	var res loadgen.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("no JSON result: %v\n%s", err, data)
	}
	if !res.Interrupted || !res.Accounting.Balanced() || res.Accounting.Due == 0 || res.DurationSeconds > 5 {
		t.Fatalf("partial result: interrupted %v, %s, %.2fs", res.Interrupted, res.Accounting, res.DurationSeconds)
	}
	return res
}

// SIGTERM (Nomad's stop) ends the run early: the partial JSON result is
// still written, and the exit status says it is partial.
func TestLoadWritesPartialResultAndFailsOnSigterm(t *testing.T) {
	srv, hits := slowCounted(t)
	file := filepath.Join(t.TempDir(), "result.json")
	cmd, out := startChild(t, hits, nil, "load", "--json", "-o", file, "-t1", "-c2", "-d20s", "-R20", srv.URL)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if code := exitCode(t, err); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	text := out.String()
	res := partialResult(t, []byte(text[:strings.LastIndex(text, "}")+1]))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if again := partialResult(t, data); again.Accounting != res.Accounting {
		t.Fatalf("file and stdout differ: %s vs %s", again.Accounting, res.Accounting)
	}
	if !strings.Contains(text, "interrupted") {
		t.Fatalf("no word of the interruption:\n%s", text)
	}
}

// The load job's stop signal reaches loadjob only (PID 1 of the task); it
// must pass it on, so the generator writes its partial result, and fail.
func TestLoadjobForwardsTheStopSignal(t *testing.T) {
	srv, hits := slowCounted(t)
	file := filepath.Join(t.TempDir(), "result.json")
	args, _ := json.Marshal([]string{"-t1", "-c2", "-d20s", "-R20", srv.URL})
	cmd, out := startChild(t, hits, []string{"NOMAD_META_args=" + string(args)}, "loadjob", "--out", file)
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd.Wait()); code == 0 {
		t.Fatalf("loadjob exited 0 after SIGTERM:\n%s", out.String())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no partial result: %v\n%s", err, out.String())
	}
	partialResult(t, data)
}

// Errors of the server are measurements: a run that got only 503s exits 0.
func TestLoadSucceedsWhenTheServerErrs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	out, err := execLoad(t, "-t1", "-c1", "-d500ms", "-R20", "--json", srv.URL)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res loadgen.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Interrupted || res.Accounting.HTTPErrors != 10 || res.Accounting.Due != 10 {
		t.Fatalf("interrupted %v, %s", res.Interrupted, res.Accounting)
	}
}
