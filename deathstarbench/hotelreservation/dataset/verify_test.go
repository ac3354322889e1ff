package dataset_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation"
	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	"github.com/orchbench/orchbench/harness/testutil"
)

// startDeployment runs every service in memory until the test ends and
// returns the front end's base URL.
func startDeployment(t *testing.T) string {
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

// proxy serves the deployment at base through rewrite, recording each
// request's method and URI.
type proxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newProxy(t *testing.T, base string, rewrite func(path, body string) string) *proxy {
	p := &proxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Method+" "+r.URL.RequestURI())
		p.mu.Unlock()
		resp, err := http.Get(base + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		io.WriteString(w, rewrite(r.URL.Path, string(body)))
	}))
	t.Cleanup(p.Close)
	return p
}

func verify(t *testing.T, frontend string, opts dataset.VerifyOptions) (dataset.VerifyResult, []string, error) {
	t.Helper()
	var lines []string
	opts.Frontend = frontend
	opts.Progress = func(line string) { lines = append(lines, line) }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	result, err := dataset.Verify(ctx, opts)
	return result, lines, err
}

func TestVerifyPassesOnTheSeededDeployment(t *testing.T) {
	p := newProxy(t, startDeployment(t), func(_, body string) string { return body })
	started := time.Now()
	result, lines, err := verify(t, p.URL, dataset.VerifyOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	t.Logf("%d checks in %s:\n%s", len(result.Checks), time.Since(started).Round(time.Millisecond), strings.Join(lines, "\n"))
	if len(lines) != len(result.Checks) || len(result.Checks) != 11 {
		t.Fatalf("%d lines for %d checks, want 11 of each", len(lines), len(result.Checks))
	}
	all := strings.Join(lines, "\n") + "\n"
	for _, want := range []string{
		"ok    hotels near hotel 1 on 2015-04-09..2015-04-10 are 2, 1, 3",
		// Derived from the seed: hotels n ≡ 9 (mod 15) rate 232, hotel 2 costs 120.
		"ok    recommendations by rate are hotels 9, 24, 39, 54, 69",
		"ok    recommendations by price are hotels 2",
		"ok    recommendation by distance at hotel 3's position is hotel 3",
		"ok    22 seeded users log in (Cornell_0, Cornell_500 and 20 drawn with seed 1)",
		"ok    a wrong password is refused",
	} {
		if !strings.Contains(all, want+"\n") {
			t.Errorf("no line %q", want)
		}
	}

	// Read-only, GETs only, and the users drawn are the same every time.
	users := map[string]bool{}
	p.mu.Lock()
	first := append([]string(nil), p.seen...)
	p.seen = nil
	p.mu.Unlock()
	for _, s := range first {
		if !strings.HasPrefix(s, "GET /") || strings.Contains(s, "/reservation") {
			t.Errorf("request %s: want only GETs and no reservation", s)
		}
		if strings.HasPrefix(s, "GET /user?") && strings.Contains(s, "password=") {
			users[s] = true
		}
	}
	if !users["GET /user?username=Cornell_0&password=0000000000"] || !users["GET /user?username=Cornell_500&password="+dataset.Password(500)] || len(users) != 23 {
		t.Errorf("logins %v: want Cornell_0, Cornell_500, 20 others and one wrong password", users)
	}
	if _, _, err := verify(t, p.URL, dataset.VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.Join(p.seen, "\n") != strings.Join(first, "\n") {
		t.Errorf("a second run asked other things:\n%s\nthen\n%s", strings.Join(first, "\n"), strings.Join(p.seen, "\n"))
	}
}

// fake answers every request with status and body.
func fake(t *testing.T, status int, body string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func TestVerifyFailsOnAWrongDeployment(t *testing.T) {
	base := startDeployment(t)
	long := strings.Repeat("x", 1000)
	for _, c := range []struct {
		name     string
		frontend string
		// The error must hold each of these.
		want []string
	}{
		{"an empty collection", fake(t, 200, `{"features":[],"type":"FeatureCollection"}`+"\n"),
			[]string{"11 of 11 checks failed", "first: hotels near hotel 1 on 2015-04-09..2015-04-10 are 2, 1, 3: ",
				"want hotels, in this order, 2, 1, 3, got []", `got HTTP 200, body "{\"features\":[],\"type\":\"FeatureCollection\"}\n"`}},
		{"an empty body", fake(t, 200, ""),
			[]string{"first: hotels near hotel 1", "not a GeoJSON FeatureCollection", `got HTTP 200, body ""`}},
		{"JSON of another shape", fake(t, 200, `{"message":"Login successfully!"}`),
			[]string{"first: hotels near hotel 1", "not a GeoJSON FeatureCollection (want"}},
		{"a server error", fake(t, 500, "rpc error: code = Unavailable\n"),
			[]string{"first: hotels near hotel 1", "want HTTP 200", `got HTTP 500, body "rpc error: code = Unavailable\n"`}},
		{"a long body, shown up to 200 bytes", fake(t, 200, long),
			[]string{`body "` + long[:200] + `..."`}},
		{"wrong names", newProxy(t, base, func(_, body string) string {
			return strings.ReplaceAll(body, "W San Francisco", "W Oakland")
		}).URL, []string{"2 of 11 checks failed", "first: hotels near hotel 1",
			`hotel 2: want name "W San Francisco" and phone number "(415) 777-5300", got "W Oakland" and "(415) 777-5300"`}},
		{"wrong positions", newProxy(t, base, func(_, body string) string {
			return strings.ReplaceAll(body, "[-122.4071,37.7834]", "[-122.4071,37.7854]")
		}).URL, []string{"2 of 11 checks failed", "first: hotels near hotel 1",
			"hotel 3: want coordinates [-122.4071, 37.7834], got [-122.4071 37.7854]"}},
		{"another rate order", newProxy(t, base, func(path, body string) string {
			if path != "/hotels" || !strings.Contains(body, `"id":"2"`) {
				return body
			}
			return strings.Replace(strings.Replace(body, `"id":"2"`, `"id":"x"`, 1), `"id":"1"`, `"id":"2"`, 1)
		}).URL, []string{"1 of 11 checks failed", "want hotels, in this order, 2, 1, 3, got [x, 2, 3]"}},
		{"no users", newProxy(t, base, func(path, body string) string {
			if path == "/user" {
				return `{"message":"Failed. Please check your username and password. "}` + "\n"
			}
			return body
		}).URL, []string{"1 of 11 checks failed", "first: 22 seeded users log in (Cornell_0, Cornell_500 and 20 drawn with seed 1): Cornell_0: want message \"Login successfully!\""}},
		{"any password", newProxy(t, base, func(path, body string) string {
			if path == "/user" {
				return `{"message":"Login successfully!"}` + "\n"
			}
			return body
		}).URL, []string{"1 of 11 checks failed", "first: a wrong password is refused"}},
		{"nothing listening", "http://" + testutil.FreeAddr(t),
			[]string{"11 of 11 checks failed", "first: hotels near hotel 1", "no answer: ", "connection refused"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			result, lines, err := verify(t, c.frontend, dataset.VerifyOptions{})
			if err == nil {
				t.Fatalf("passed:\n%s", strings.Join(lines, "\n"))
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\nlacks %q", err, want)
				}
			}
			if len(lines) != len(result.Checks) || !strings.Contains(strings.Join(lines, "\n"), "FAIL  ") {
				t.Errorf("want one line per check with the failures marked:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}

// A front end that answers too slowly fails each check at the request
// timeout, and the whole run ends with its context.
func TestVerifyIsBoundedInTime(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })

	started := time.Now()
	_, lines, err := verify(t, slow.URL, dataset.VerifyOptions{RequestTimeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "11 of 11 checks failed") || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("err = %v\n%s", err, strings.Join(lines, "\n"))
	}
	if elapsed := time.Since(started); elapsed > 5*time.Second {
		t.Errorf("11 checks at a 50 ms timeout took %s", elapsed)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	started = time.Now()
	result, err := dataset.Verify(ctx, dataset.VerifyOptions{Frontend: slow.URL, RequestTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "verification stopped after 1 checks") {
		t.Fatalf("err = %v, checks %+v", err, result.Checks)
	}
	if elapsed := time.Since(started); elapsed > 3*time.Second {
		t.Errorf("a 300 ms run took %s", elapsed)
	}
}
