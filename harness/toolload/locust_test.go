package toolload

import (
	"os"
	"strings"
	"testing"
	"time"
)

// testdata/locust-2.47.0.json is the real --json-file output of Locust
// 2.47.0 (4 users, 3 s) against fortio's echo server.
func TestLocustParse(t *testing.T) {
	b, err := os.ReadFile("testdata/locust-2.47.0.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Locust{}.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Accounting
	if a.Due != 15529 || a.Completed != 15529 || !a.Balanced() {
		t.Errorf("accounting %s", a)
	}
	if d := res.DurationSeconds; d < 2.82 || d > 2.83 {
		t.Errorf("window %.3f s, want last - first request (2.826 s)", d)
	}
	p := map[float64]int64{}
	for _, v := range res.Latency.Percentiles {
		p[v.Percentile] = v.Value
	}
	// 8165 of 15529 answers were rounded to 0 ms (recorded at 1 µs), 7081 to 1 ms
	if p[50] != 1 || p[75] != 1000 || p[99] != 2000 || p[100] < 37000 || p[100] > 37100 {
		t.Errorf("percentiles %v", p)
	}
	if ep := res.Endpoints[0]; ep.Label != "GET /echo?size=44" || ep.BodyBytes != 44*15529 {
		t.Errorf("endpoint %+v", ep)
	}
}

func TestLocustParseRefusesGarbage(t *testing.T) {
	good, _ := os.ReadFile("testdata/locust-2.47.0.json")
	for name, c := range map[string]struct{ in, want string }{
		"empty":          {"", "locust result: unexpected end of JSON input"},
		"no requests":    {"[]", "no request was made"},
		"missing fields": {`[{"name": "GET /"}]`, `entry "GET /" lacks start_time`},
		"counts differ":  {strings.Replace(string(good), `"num_requests": 15529`, `"num_requests": 15530`, 1), "15530 requests but 15529 response times"},
		"not a list":     {`{"stats": []}`, "locust result: json: cannot unmarshal object"},
	} {
		_, err := Locust{}.Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

// Locust counts every request twice, in its totals and by second; a file
// whose two counts disagree (truncated, merged, edited) is refused with the
// figures, its result kept for the archive.
func TestLocustResultThatContradictsItselfIsRefused(t *testing.T) {
	good, _ := os.ReadFile("testdata/locust-2.47.0.json")
	perSecond := `"num_reqs_per_sec": {`
	for name, c := range map[string]struct{ old, new, want string }{
		"an unknown key":     {`"num_requests": 15529`, `"num_requests": 15529, "ignored": 0`, ""},
		"lost seconds":       {perSecond, perSecond + `"1795645400": 10, `, `"GET /echo?size=44" has 15529 requests but 15539 in its per-second counts`},
		"failures by second": {`"num_failures": 0`, `"num_failures": 7`, `"GET /echo?size=44" has 7 failures but 0 in its per-second counts`},
		"too many failures":  {`"num_failures": 0`, `"num_failures": 20000`, `"GET /echo?size=44" has 20000 failures of 15529 requests`},
		"no per-second":      {perSecond, `"renamed": {`, `"GET /echo?size=44" has no per-second request counts`},
	} {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(string(good), c.old, c.new, 1)
			if in == string(good) {
				t.Fatalf("%q is not in the test data", c.old)
			}
			res, err := Locust{}.Parse([]byte(in))
			if c.want == "" {
				if err != nil {
					t.Fatalf("a consistent file refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "locust result contradicts itself: "+c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if res == nil || res.Accounting.Due != 15529 {
				t.Fatalf("the contradicting result was not kept for the archive: %+v", res)
			}
		})
	}
}

// Locust cannot say when it stopped; the runner does.
func TestLocustLeavesWallTimeToTheRunner(t *testing.T) {
	b, _ := os.ReadFile("testdata/locust-2.47.0.json")
	res, err := Locust{}.Parse(b)
	if err != nil || res.WallSeconds != 0 {
		t.Fatalf("wall %.3f s, %v; want 0 until the runner sets it", res.WallSeconds, err)
	}
}

func TestLocustCommandAndFile(t *testing.T) {
	req := Request{URL: "http://127.0.0.1:26715/?n=1000", Connections: 10, Think: 2 * time.Second, Warmup: 500 * time.Millisecond, Duration: time.Minute, Timeout: time.Second}
	w, r, err := Locust{}.Command(req, "/local", "/alloc")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r, " "); got != "-f /local/locustfile.py --headless -u 10 -r 10 --host http://127.0.0.1:26715 --only-summary --skip-log -t 62s --json-file /alloc/result" {
		t.Errorf("run: %s", got)
	}
	if got := strings.Join(w, " "); !strings.HasSuffix(got, "--skip-log -t 1s") {
		t.Errorf("warm-up: %s", got)
	}
	files, err := Locust{}.Files(req)
	if err != nil {
		t.Fatal(err)
	}
	src := files["locustfile.py"]
	for _, want := range []string{"wait_time = constant(2)", "network_timeout = 1", `self.client.get("/?n=1000", name="GET /?n=1000")`} {
		if !strings.Contains(src, want) {
			t.Errorf("locustfile lacks %s:\n%s", want, src)
		}
	}
}
