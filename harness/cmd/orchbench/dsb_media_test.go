package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	mediadataset "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	"github.com/orchbench/orchbench/harness/testutil"
)

// runMedia runs `orchbench dsb media-microservices ARGS` as a process, as
// the pack's hooks do, and returns its output and exit code.
func runMedia(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"dsb", "media-microservices"}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestDSBMediaLoadExitCode: a front end that takes every write is loaded
// in full (exit 0, every phase closed); one that is not there, or that
// fails a request, makes the exit status non-zero with the reason.
func TestDSBMediaLoadExitCode(t *testing.T) {
	var posts atomic.Int64
	accepting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
	}))
	defer accepting.Close()
	out, code := runMedia(t, "load", "--frontend", accepting.URL, "--users", "3")
	requests := mediadataset.Requests(3)
	if code != 0 || int(posts.Load()) != requests || !strings.Contains(out, "users: 3 ok, 0 already present, 0 failed of 3 in ") ||
		!strings.Contains(out, "movie-info: 995 ok") || !strings.Contains(out, fmt.Sprintf("%d requests, 0 failed\n", requests)) {
		t.Fatalf("on a front end that takes everything: exit %d, %d posts of %d\n%s", code, posts.Load(), requests, out)
	}

	out, code = runMedia(t, "load", "--frontend", "http://"+testutil.FreeAddr(t))
	if code == 0 || !strings.Contains(out, "orchbench: front end http://") || !strings.Contains(out, "does not answer GET /healthz") {
		t.Fatalf("on nothing listening: exit %d\n%s", code, out)
	}

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wrk2-api/user/register" {
			http.Error(w, "user-service: connection refused", http.StatusInternalServerError)
		}
	}))
	defer failing.Close()
	out, code = runMedia(t, "load", "--frontend", failing.URL, "--users", "2")
	if code == 0 || !strings.Contains(out, `users error: POST /wrk2-api/user/register username_`) ||
		!strings.Contains(out, "orchbench: 2 of 2 requests of phase users failed, so the load stopped there; first: POST /wrk2-api/user/register username_") ||
		!strings.Contains(out, `got HTTP 500, body "user-service: connection refused\n"`) {
		t.Fatalf("on failing registrations: exit %d\n%s", code, out)
	}
}

func TestDSBMediaVerifyExitCode(t *testing.T) {
	empty := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer empty.Close()
	out, code := runMedia(t, "verify", "--frontend", empty.URL, "--timeout", "30s")
	if code == 0 || !strings.Contains(out, "FAIL  1000 users exist with their names (every one): username_1: not a JSON user") ||
		!strings.Contains(out, "orchbench: 5 of 5 checks failed; first: 1000 users exist") || !strings.Contains(out, `got HTTP 200, body ""`) {
		t.Fatalf("on an empty 200: exit %d\n%s", code, out)
	}
	out, code = runMedia(t, "verify", "--frontend", empty.URL, "--sampled-users", "5", "--sampled-movies", "5", "--seed", "3")
	if code == 0 || !strings.Contains(out, "FAIL  7 users exist with their names (the first, the last and 5 drawn with seed 3)") ||
		!strings.Contains(out, "FAIL  7 titles give their movie ids (the first, the last and 5 drawn with seed 4)") {
		t.Fatalf("sampled, on an empty 200: exit %d\n%s", code, out)
	}
}

func TestDSBMediaRefusesARemoteFrontend(t *testing.T) {
	for _, verb := range []string{"load", "verify"} {
		cmd := newDSBMediaCmd()
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		// 192.0.2.1 is TEST-NET-1: nothing is sent, the address is refused first.
		cmd.SetArgs([]string{verb, "--frontend", "http://192.0.2.1:8080"})
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("%s: want a refusal naming --allow-remote, got %v", verb, err)
		}
	}
}
