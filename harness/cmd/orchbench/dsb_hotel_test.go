package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation"
)

func startHotelReservation(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := hotelreservation.Start(ctx, hotelreservation.ServiceNames(), map[string]string{"frontend": "127.0.0.1:0"},
		hotelreservation.Settings{StorageMode: "memory", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return "http://" + r.Addrs["frontend"]
}

// runHotelVerify runs `orchbench dsb hotel-reservation verify ARGS` as a
// process, as the sweep's verify hook does, and returns its output and
// exit code.
func runHotelVerify(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"dsb", "hotel-reservation", "verify"}, args...)...)
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

func TestDSBHotelVerifyExitCode(t *testing.T) {
	out, code := runHotelVerify(t, "--frontend", startHotelReservation(t))
	if code != 0 || !strings.Contains(out, "ok    hotels near hotel 1") || !strings.Contains(out, "ok: 11 checks passed") {
		t.Fatalf("on the seeded deployment: exit %d\n%s", code, out)
	}

	empty := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer empty.Close()
	out, code = runHotelVerify(t, "--frontend", empty.URL, "--timeout", "30s")
	if code == 0 || !strings.Contains(out, "FAIL  hotels near hotel 1") ||
		!strings.Contains(out, "orchbench: 11 of 11 checks failed; first: hotels near hotel 1") || !strings.Contains(out, `got HTTP 200, body ""`) {
		t.Fatalf("on an empty 200: exit %d\n%s", code, out)
	}
}

func TestDSBHotelVerifyRefusesARemoteFrontend(t *testing.T) {
	cmd := newDSBHotelCmd()
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	// 192.0.2.1 is TEST-NET-1: nothing is sent, the address is refused first.
	cmd.SetArgs([]string{"verify", "--frontend", "http://192.0.2.1:5000"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("want a refusal naming --allow-remote, got %v", err)
	}
}
