package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/orchbench/orchbench/harness/testutil"
)

// Timing on the shared CI machine is noisy, so the tests assert on counts
// and structure and give latency bounds wide margins.

type countingServer struct {
	*httptest.Server
	hits  atomic.Int64
	conns atomic.Int64
	mu    sync.Mutex
	seen  []seenRequest
}

type seenRequest struct {
	method, uri, body, contentType string
	header                         http.Header
}

func newServer(t *testing.T, handler func(w http.ResponseWriter, r *http.Request)) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, seenRequest{r.Method, r.RequestURI, string(body), r.Header.Get("Content-Type"), r.Header.Clone()})
		s.mu.Unlock()
		if handler != nil {
			handler(w, r)
			return
		}
		io.WriteString(w, "hello\n")
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func runLoad(t *testing.T, cfg Config) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestOpenLoopSendsTheScheduledCount(t *testing.T) {
	srv := newServer(t, nil)
	res := runLoad(t, Config{URL: srv.URL + "/", Threads: 2, Connections: 4, Rate: 200, Duration: 2 * time.Second})
	// 200/s for 2 s is exactly 400 scheduled requests; a few may be cut at
	// the end on a loaded machine.
	if res.Requests < 380 || res.Requests > 400 {
		t.Fatalf("requests = %d, want ~400", res.Requests)
	}
	if got := srv.hits.Load(); got < res.Requests {
		t.Fatalf("server saw %d requests, result claims %d", got, res.Requests)
	}
	if res.OfferedRate < 199 || res.OfferedRate > 201 {
		t.Fatalf("offered = %v, want 200", res.OfferedRate)
	}
	if res.StatusCodes[200] != res.Requests || res.Errors.Total() != 0 {
		t.Fatalf("status codes %v, errors %+v", res.StatusCodes, res.Errors)
	}
	if res.Latency.Count != res.Requests || res.UncorrectedLatency.Count != res.Requests {
		t.Fatalf("histogram counts %d/%d, want %d", res.Latency.Count, res.UncorrectedLatency.Count, res.Requests)
	}
	h, err := res.Latency.Decode()
	if err != nil || h.TotalCount() != res.Requests {
		t.Fatalf("decoded histogram: %v, count %d", err, h.TotalCount())
	}
	if res.Latency.Buckets != 27 || res.Latency.SubBuckets != 2048 {
		t.Fatalf("layout %d/%d, want wrk2's 27/2048", res.Latency.Buckets, res.Latency.SubBuckets)
	}
	if len(res.Endpoints) != 1 || res.Endpoints[0].Label != "GET /" || res.Endpoints[0].Count != res.Requests {
		t.Fatalf("endpoints = %+v", res.Endpoints)
	}
	if res.ResponseBytes.Min <= 0 || res.ResponseBytes.Min != res.ResponseBytes.Max {
		t.Fatalf("response bytes %+v", res.ResponseBytes)
	}
	var seriesTotal float64
	for _, p := range res.Series {
		seriesTotal += p.AchievedRate * p.Seconds
	}
	if len(res.Series) < 2 || len(res.Series) > 4 || int64(seriesTotal+0.5) != res.Requests {
		t.Fatalf("series has %d points summing to %.1f, want 2-4 points summing to %d", len(res.Series), seriesTotal, res.Requests)
	}
	// Every connection was opened once and kept alive.
	if got := srv.conns.Load(); got != 4 {
		t.Fatalf("server saw %d connections, want 4", got)
	}
}

func TestLatencyIsMeasuredFromTheSchedule(t *testing.T) {
	var n atomic.Int64
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		// One long stall: with one connection at 50/s the ~20 requests due
		// during it queue up, which only the corrected latency shows.
		if n.Add(1) == 10 {
			time.Sleep(500 * time.Millisecond)
		}
		io.WriteString(w, "ok")
	})
	res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 1, Rate: 50, Duration: 2 * time.Second})
	corr, _ := res.Latency.Decode()
	unc, _ := res.UncorrectedLatency.Decode()
	slowCorr := corr.TotalCount() - countBelow(corr.CumulativeDistribution(), 100_000)
	slowUnc := unc.TotalCount() - countBelow(unc.CumulativeDistribution(), 100_000)
	if slowCorr < 10 {
		t.Fatalf("corrected latency has %d samples over 100ms, want >= 10 (coordinated omission not corrected)", slowCorr)
	}
	if slowUnc > 3 {
		t.Fatalf("uncorrected latency has %d samples over 100ms, want only the stalled one", slowUnc)
	}
	if res.Latency.Max < 400_000 {
		t.Fatalf("corrected max %dus, want >= 400ms", res.Latency.Max)
	}
}

func countBelow(d []hdr.Bracket, us int64) int64 {
	var n int64
	for _, b := range d {
		if b.ValueAt < us {
			n = b.Count
		}
	}
	return n
}

func TestLatencyOfASleepingServer(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, "ok")
	})
	res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 4, Rate: 40, Duration: 2 * time.Second})
	p50 := percentileOf(res.Latency, 50)
	if p50 < 19_000 || p50 > 40_000 {
		t.Fatalf("p50 = %dus, want ~20ms", p50)
	}
}

func TestWarmupIsRecordedSeparately(t *testing.T) {
	srv := newServer(t, nil)
	res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 2, Rate: 100, Duration: time.Second, Warmup: 500 * time.Millisecond})
	if res.Warmup == nil || res.Warmup.Requests < 45 || res.Warmup.Requests > 50 {
		t.Fatalf("warm-up = %+v, want ~50 requests", res.Warmup)
	}
	if res.Requests < 95 || res.Requests > 100 {
		t.Fatalf("measured requests = %d, want ~100", res.Requests)
	}
	if total := srv.hits.Load(); total != res.Requests+res.Warmup.Requests {
		t.Fatalf("server saw %d, result has %d + %d warm-up", total, res.Requests, res.Warmup.Requests)
	}
	if res.Series[0].T >= 0 || !res.Series[0].Warmup {
		t.Fatalf("first series point %+v should be in the warm-up", res.Series[0])
	}
}

func TestPhasesRampAndIdlePad(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	phases, err := ParsePhases("1s@50,1s@50->150,1s@0")
	if err != nil {
		t.Fatal(err)
	}
	res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 4, Phases: phases, SeriesInterval: time.Second})
	// 50 + (50+150)/2 + 0 = 150 requests.
	if res.Requests < 140 || res.Requests > 150 {
		t.Fatalf("requests = %d, want ~150", res.Requests)
	}
	if len(res.Series) < 3 {
		t.Fatalf("series = %+v", res.Series)
	}
	if res.Series[2].OfferedRate != 0 || res.Series[2].AchievedRate > 5 {
		t.Fatalf("idle pad interval = %+v", res.Series[2])
	}
	if res.Series[1].OfferedRate < 99 || res.Series[1].OfferedRate > 101 {
		t.Fatalf("ramp interval offered %v, want mean 100", res.Series[1].OfferedRate)
	}
}

func TestClosedLoopStopsAtCounts(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			srv := newServer(t, nil)
			res := runLoad(t, Config{URL: srv.URL, Connections: 3, Threads: 1, Closed: &Closed{Iterations: 5}, Engine: engine})
			if res.Requests != 15 || srv.hits.Load() != 15 {
				t.Fatalf("iterations: result %d, server %d, want 15", res.Requests, srv.hits.Load())
			}
			srv2 := newServer(t, nil)
			res = runLoad(t, Config{URL: srv2.URL, Connections: 4, Threads: 2, Closed: &Closed{MaxRequests: 7}, Engine: engine})
			if res.Requests != 7 || srv2.hits.Load() != 7 {
				t.Fatalf("max requests: result %d, server %d, want 7", res.Requests, srv2.hits.Load())
			}
			if res.Config.Mode != "closed" || res.OfferedRate != 0 || res.Config.Engine != engine {
				t.Fatalf("config echo %+v offered %v", res.Config, res.OfferedRate)
			}
		})
	}
}

func TestClosedLoopThinkTime(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, nil)
			res := runLoad(t, Config{URL: srv.URL, Connections: 2, Threads: 1, Duration: time.Second,
				Closed: &Closed{ThinkMin: 80 * time.Millisecond, ThinkMax: 120 * time.Millisecond}, Engine: engine})
			// Each user does about one request per 100 ms: ~10 each, never more
			// than 1s/80ms + 1.
			if res.Requests < 8 || res.Requests > 2*13 {
				t.Fatalf("requests = %d, want ~20", res.Requests)
			}
		})
	}
}

func TestConnectionCloseOpensAConnectionPerRequest(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	res := runLoad(t, Config{URL: srv.URL, Connections: 2, Threads: 1, Rate: 50, Duration: time.Second, ConnectionClose: true})
	if res.Requests < 45 {
		t.Fatalf("requests = %d", res.Requests)
	}
	if got := srv.conns.Load(); got < res.Requests {
		t.Fatalf("server saw %d connections for %d requests", got, res.Requests)
	}
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		addr := testutil.FreeAddr(t)
		res := runLoad(t, Config{URL: "http://" + addr + "/", Connections: 1, Threads: 1, Rate: 20, Duration: 500 * time.Millisecond})
		if res.Errors.Connect < 5 || res.Errors.Classes["connect_refused"] != res.Errors.Connect || res.Requests != 0 {
			t.Fatalf("errors = %+v, requests %d", res.Errors, res.Requests)
		}
	})
	t.Run("closed by server", func(t *testing.T) {
		addr := testutil.ListenAndHold(t, func(c net.Conn) {
			buf := make([]byte, 4096)
			c.Read(buf)
			c.Close()
		})
		res := runLoad(t, Config{URL: "http://" + addr + "/", Connections: 1, Threads: 1, Rate: 20, Duration: 500 * time.Millisecond})
		cl := res.Errors.Classes
		if res.Errors.Read < 5 || cl["eof"]+cl["reset"] != res.Errors.Read {
			t.Fatalf("errors = %+v", res.Errors)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Second) })
		res := runLoad(t, Config{URL: srv.URL, Connections: 2, Threads: 1, Rate: 10, Duration: 500 * time.Millisecond, Timeout: 100 * time.Millisecond})
		if res.Errors.Timeout < 2 || res.Errors.Classes["timeout"] != res.Errors.Timeout {
			t.Fatalf("errors = %+v", res.Errors)
		}
	})
	t.Run("status", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
		res := runLoad(t, Config{URL: srv.URL, Connections: 1, Threads: 1, Rate: 20, Duration: 500 * time.Millisecond})
		if res.Errors.Status != res.Requests || res.StatusCodes[503] != res.Requests || res.Requests < 8 {
			t.Fatalf("status errors %d, codes %v, requests %d", res.Errors.Status, res.StatusCodes, res.Requests)
		}
	})
}

func TestWorkloadEndpoints(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	w := WorkloadFunc(func(rng *rand.Rand) Request {
		switch rng.IntN(3) {
		case 0:
			return Request{Path: "/user/" + strings.Repeat("7", 1+rng.IntN(4))}
		case 1:
			return Request{Method: "POST", Path: "/post", Body: []byte("x=1")}
		}
		return Request{Path: "/search?q=a", Label: "search"}
	})
	res := runLoad(t, Config{URL: srv.URL, Connections: 2, Threads: 1, Rate: 100, Duration: time.Second, Workload: w, Seed: 1})
	got := map[string]int64{}
	var sum int64
	for _, e := range res.Endpoints {
		got[e.Label] = e.Count
		sum += e.Count
	}
	if len(got) != 3 || got["GET /user/{id}"] == 0 || got["POST /post"] == 0 || got["search"] == 0 || sum != res.Requests {
		t.Fatalf("endpoints = %v (requests %d)", got, res.Requests)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	posts := 0
	for _, s := range srv.seen {
		if s.method == "POST" {
			posts++
			if s.body != "x=1" || s.uri != "/post" {
				t.Fatalf("POST seen as %+v", s)
			}
		}
	}
	if int64(posts) < got["POST /post"] {
		t.Fatalf("server saw %d POSTs, result %d", posts, got["POST /post"])
	}
}

func TestDeathStarBenchStyleScript(t *testing.T) {
	t.Setenv("max_user_index", "50")
	srv := newServer(t, nil)
	res := runLoad(t, Config{URL: srv.URL, Connections: 4, Threads: 2, Rate: 200, Duration: time.Second,
		ScriptPath: "testdata/social-mixed.lua", Distribution: "exp"})
	if res.Requests < 100 {
		t.Fatalf("requests = %d", res.Requests)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	kinds := map[string]int{}
	for _, s := range srv.seen {
		switch {
		case s.method == "POST" && s.uri == "http://localhost:8080/wrk2-api/post/compose":
			if s.contentType != "application/x-www-form-urlencoded" || !strings.HasPrefix(s.body, "username=username_") || !strings.Contains(s.body, "&post_type=0") {
				t.Fatalf("compose request %+v", s)
			}
			kinds["compose"]++
		case s.method == "GET" && strings.HasPrefix(s.uri, "http://localhost:8080/wrk2-api/home-timeline/read?user_id="):
			kinds["home"]++
		case s.method == "GET" && strings.HasPrefix(s.uri, "http://localhost:8080/wrk2-api/user-timeline/read?user_id="):
			kinds["user"]++
		default:
			t.Fatalf("unexpected request %+v", s)
		}
		// os.getenv reached the script: user ids stay below 50.
		if i := strings.Index(s.uri, "user_id="); i >= 0 {
			id := strings.SplitN(s.uri[i+8:], "&", 2)[0]
			if len(id) > 2 {
				t.Fatalf("user id %s ignores max_user_index", id)
			}
		}
	}
	if kinds["compose"] == 0 || kinds["home"] <= kinds["compose"] || kinds["user"] == 0 {
		t.Fatalf("request mix = %v", kinds)
	}
	labels := map[string]bool{}
	for _, e := range res.Endpoints {
		labels[e.Label] = true
	}
	for _, want := range []string{"POST /wrk2-api/post/compose", "GET /wrk2-api/home-timeline/read", "GET /wrk2-api/user-timeline/read"} {
		if !labels[want] {
			t.Fatalf("endpoint labels %v lack %q", labels, want)
		}
	}
}

func TestScriptLifecycleHooks(t *testing.T) {
	doneFile := filepath.Join(t.TempDir(), "done")
	t.Setenv("DONE_FILE", doneFile)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pong") })
	res := runLoad(t, Config{URL: srv.URL + "/ping", Connections: 2, Threads: 2, Rate: 40, Duration: time.Second,
		ScriptPath: "testdata/hooks.lua", ScriptArgs: []string{"arg-one"}})
	srv.mu.Lock()
	threadsSeen := map[string]bool{}
	for _, s := range srv.seen {
		if s.method != "PUT" || s.body != "payload" || s.uri != "/ping" || s.header.Get("X-Arg") != "arg-one" {
			t.Fatalf("request %+v", s)
		}
		threadsSeen[s.header.Get("X-Thread")] = true
	}
	srv.mu.Unlock()
	if !threadsSeen["1"] || !threadsSeen["2"] {
		t.Fatalf("setup's thread:set did not reach both threads: %v", threadsSeen)
	}
	data, err := os.ReadFile(doneFile)
	if err != nil {
		t.Fatalf("done() did not run: %v", err)
	}
	var requests, responses, p50ok, maxok int64
	if _, err := fmt.Sscan(string(data), &requests, &responses, &p50ok, &maxok); err != nil {
		t.Fatalf("done output %q: %v", data, err)
	}
	if requests != res.Requests || responses != res.Requests || p50ok != 1 || maxok != 1 {
		t.Fatalf("done saw requests=%d responses=%d (%d %d), result has %d", requests, responses, p50ok, maxok, res.Requests)
	}
}

func TestRemoteTargetsNeedPermission(t *testing.T) {
	_, err := Run(context.Background(), Config{URL: "http://192.0.2.10:80/", Rate: 1, Duration: time.Second})
	if err == nil || !strings.Contains(err.Error(), "allow-remote") {
		t.Fatalf("remote target accepted: %v", err)
	}
	if err := checkAllowed("192.0.2.10:80", false, []string{"192.0.2.0/24"}); err != nil {
		t.Fatalf("CIDR allow-list: %v", err)
	}
	if err := checkAllowed("192.0.2.10:80", true, nil); err != nil {
		t.Fatalf("allow-remote: %v", err)
	}
	if err := checkAllowed("localhost:80", false, nil); err != nil {
		t.Fatalf("localhost: %v", err)
	}
}

func TestTextReportRoundTrip(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			w.WriteHeader(404)
		}
	})
	w := WorkloadFunc(func(rng *rand.Rand) Request {
		if rng.IntN(4) == 0 {
			return Request{Path: "/missing"}
		}
		return Request{Path: "/"}
	})
	res := runLoad(t, Config{URL: srv.URL, Connections: 2, Threads: 2, Rate: 100, Duration: time.Second, Workload: w})
	var buf bytes.Buffer
	if err := WriteText(&buf, res, ReportOptions{Latency: true, UncorrectedLatency: true, Extended: true}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"Latency Distribution (HdrHistogram - Recorded Latency)", "Detailed Percentile spectrum:",
		"Value   Percentile   TotalCount 1/(1-Percentile)", "#[Buckets =           27, SubBuckets     =         2048]",
		"Non-2xx or 3xx responses:", "Requests/sec:", "Transfer/sec:", "Uncorrected Latency",
		"  Accounting: " + res.Accounting.String() + "\n", "  Generator: lag p99 ",
		"  Peers (connections by the address the sockets reached):\n    " + strings.TrimPrefix(srv.URL, "http://")} {
		if !strings.Contains(text, want) {
			t.Fatalf("report lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(res.Accounting.String(), fmt.Sprintf("%d due = %d completed", res.Accounting.Due, res.Accounting.Completed)) {
		t.Fatalf("accounting line %q", res.Accounting.String())
	}
	back, err := ParseWrk2Text(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if back.Requests != res.Requests || back.Errors.Status != res.Errors.Status || back.Errors.Status == 0 {
		t.Fatalf("parsed requests %d status %d, want %d %d", back.Requests, back.Errors.Status, res.Requests, res.Errors.Status)
	}
	if diff := back.AchievedRate - res.AchievedRate; diff > 0.01 || diff < -0.01 {
		t.Fatalf("parsed rate %v, want %v", back.AchievedRate, res.AchievedRate)
	}
	if len(back.Latency.Percentiles) != 8 || len(back.Latency.Spectrum) != len(res.Latency.Spectrum) || back.Latency.Count != res.Latency.Count {
		t.Fatalf("parsed %d percentiles, %d spectrum rows, count %d", len(back.Latency.Percentiles), len(back.Latency.Spectrum), back.Latency.Count)
	}
	if len(back.UncorrectedLatency.Spectrum) != len(res.UncorrectedLatency.Spectrum) {
		t.Fatalf("uncorrected spectrum %d rows, want %d", len(back.UncorrectedLatency.Spectrum), len(res.UncorrectedLatency.Spectrum))
	}
	for i, p := range back.Latency.Percentiles {
		want := float64(res.Latency.Percentiles[i].Value)
		// The text keeps 3 significant digits of a ms or us value.
		if d := float64(p.Value) - want; d > want*0.01+1 || d < -want*0.01-1 {
			t.Fatalf("p%v parsed %d, want %v", p.Percentile, p.Value, want)
		}
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var again Result
	if err := json.Unmarshal(data, &again); err != nil || again.Requests != res.Requests || again.StatusCodes[404] != res.StatusCodes[404] {
		t.Fatalf("JSON round trip: %v", err)
	}
}

func TestParseRealWrk2Output(t *testing.T) {
	f, err := os.Open("testdata/wrk2-report.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := ParseWrk2Text(f)
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.Threads != 2 || res.Config.Connections != 100 || res.Config.URL != "http://127.0.0.1:80/index.html" {
		t.Fatalf("config %+v", res.Config)
	}
	if res.Requests != 60018 || res.AchievedRate != 1999.95 || res.DurationSeconds != 30.01 {
		t.Fatalf("requests %d rate %v duration %v", res.Requests, res.AchievedRate, res.DurationSeconds)
	}
	if res.Bytes < 19_000_000 || res.Bytes > 21_000_000 {
		t.Fatalf("bytes %d", res.Bytes)
	}
	if res.Errors.Connect != 0 || res.Errors.Read != 3 || res.Errors.Timeout != 12 || res.Errors.Status != 7 {
		t.Fatalf("errors %+v", res.Errors)
	}
	if p := res.Latency.Percentiles; len(p) != 8 || p[0].Value != 1050 || p[3].Value != 2230 || p[7].Percentile != 100 {
		t.Fatalf("percentiles %+v", p)
	}
	if s := res.Latency.Spectrum; len(s) != 6 || s[1].Value != 473 || s[5].Percentile != 1 || s[5].TotalCount != 60018 {
		t.Fatalf("spectrum %+v", s)
	}
	if res.Latency.Max != 3448 || res.Latency.Count != 60018 || res.Latency.Buckets != 27 {
		t.Fatalf("footer %+v", res.Latency)
	}
}
