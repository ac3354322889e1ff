package toolload

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// testdata/locust-2.47.0-window.json is the real --json-file output of
// Locust 2.47.0 (4 users, 3 s, the files and command of Locust{}) against
// fortio's echo server.
const locustWindowJSON = "testdata/locust-2.47.0-window.json"

func TestLocustParse(t *testing.T) {
	b, err := os.ReadFile(locustWindowJSON)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Locust{}.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Accounting
	if a.Due != 16717 || a.Completed != 16717 || !a.Balanced() {
		t.Errorf("accounting %s: the two marks are not requests", a)
	}
	if d := res.DurationSeconds; d < 3.021 || d > 3.022 {
		t.Errorf("window %.4f s, want the marks' 3.0216 s (the requests' own span is 3.0122 s)", d)
	}
	p := map[float64]int64{}
	for _, v := range res.Latency.Percentiles {
		p[v.Percentile] = v.Value
	}
	// 7903 of 16717 answers were rounded to 0 ms (recorded at 1 µs), 8567 to 1 ms
	if p[50] != 1000 || p[75] != 1000 || p[99] != 2000 || p[100] < 23000 || p[100] > 23100 {
		t.Errorf("percentiles %v", p)
	}
	if len(res.Endpoints) != 1 {
		t.Fatalf("endpoints %+v: the marks are not one", res.Endpoints)
	}
	if ep := res.Endpoints[0]; ep.Label != "GET /echo?size=44" || ep.BodyBytes != 44*16717 {
		t.Errorf("endpoint %+v", ep)
	}
}

// A window comes from the marks only: a file without them (Locust run
// without the marks file, as testdata/locust-2.47.0.json was), with one,
// or with requests outside them has no window to trust.
func TestLocustWindowNeedsBothMarks(t *testing.T) {
	old, err := os.ReadFile("testdata/locust-2.47.0.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Locust{}).Parse(old); err == nil || !strings.Contains(err.Error(), "no orchbench window marks, so no window") {
		t.Errorf("a file without marks: %v", err)
	}
	good, _ := os.ReadFile(locustWindowJSON)
	for name, c := range map[string]struct{ old, new, want string }{
		"only the start mark": {`"num_requests": 2,`, `"num_requests": 1,`, "1 orchbench window marks, want one at the test start and one at its stop"},
		"empty window":        {`"last_request_timestamp": 1795986761.7275171`, `"last_request_timestamp": 1795986758.705876`, "the window from 1795986758.705876 to 1795986758.705876 is empty"},
		// the run stopped 1 s early, by something else than the marks' timer
		"requests after the stop": {`"last_request_timestamp": 1795986761.7275171`, `"last_request_timestamp": 1795986760.7275171`, `"GET /echo?size=44" has requests from 1795986758.716 to 1795986761.729, outside the run's window 1795986758.706 to 1795986760.728`},
	} {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(string(good), c.old, c.new, 1)
			if in == string(good) {
				t.Fatalf("%q is not in the test data", c.old)
			}
			_, err := Locust{}.Parse([]byte(in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestLocustParseRefusesGarbage(t *testing.T) {
	good, _ := os.ReadFile(locustWindowJSON)
	for name, c := range map[string]struct{ in, want string }{
		"empty":          {"", "locust result: unexpected end of JSON input"},
		"no requests":    {string(good[:bytes.Index(good, []byte("\n    },"))]) + "}]", "no request was made"},
		"missing fields": {`[{"name": "GET /"}]`, `entry "GET /" lacks start_time`},
		"counts differ":  {strings.Replace(string(good), `"num_requests": 16717`, `"num_requests": 16718`, 1), "16718 requests but 16717 response times"},
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
	good, _ := os.ReadFile(locustWindowJSON)
	perSecond := `"num_reqs_per_sec": {`
	for name, c := range map[string]struct{ old, new, want string }{
		"an unknown key":     {`"num_requests": 16717`, `"num_requests": 16717, "ignored": 0`, ""},
		"lost seconds":       {perSecond, perSecond + `"1795645400": 10, `, `"GET /echo?size=44" has 16717 requests but 16727 in its per-second counts`},
		"failures by second": {`"num_failures": 0`, `"num_failures": 7`, `"GET /echo?size=44" has 7 failures but 0 in its per-second counts`},
		"too many failures":  {`"num_failures": 0`, `"num_failures": 20000`, `"GET /echo?size=44" has 20000 failures of 16717 requests`},
		"no per-second":      {perSecond, `"renamed": {`, `"GET /echo?size=44" has no per-second request counts`},
	} {
		t.Run(name, func(t *testing.T) {
			in := replaceInRequests(string(good), c.old, c.new)
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
			if res == nil || res.Accounting.Due != 16717 {
				t.Fatalf("the contradicting result was not kept for the archive: %+v", res)
			}
		})
	}
}

// replaceInRequests edits the first request entry, after the marks.
func replaceInRequests(file, old, new string) string {
	at := strings.Index(file, `"name": "GET `)
	if at < 0 {
		return file
	}
	return file[:at] + strings.Replace(file[at:], old, new, 1)
}

// Locust cannot say when it stopped; the runner does.
func TestLocustLeavesWallTimeToTheRunner(t *testing.T) {
	b, _ := os.ReadFile(locustWindowJSON)
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
	// the marks file ends the run at 60 s; -t only backs it up
	if got := strings.Join(r, " "); got != "-f /local/locustfile.py,/local/orchbench_window.py --headless -u 10 -r 10 --host http://127.0.0.1:26715 --only-summary --skip-log -t 65s --json-file /alloc/result" {
		t.Errorf("run: %s", got)
	}
	// a warm-up is not measured: the marks' timer would end it at 60 s, and
	// its failed requests are not the tool's failure
	if got := strings.Join(w, " "); !strings.HasPrefix(got, "-f /local/locustfile.py --headless") || !strings.HasSuffix(got, "--skip-log --exit-code-on-error 0 -t 1s") {
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
	marks := files["orchbench_window.py"]
	if !strings.Contains(marks, "RUN_SECONDS = 60\n") {
		t.Errorf("the marks file does not end the run at 60 s:\n%s", marks)
	}
	// failed requests are measured; TestEveryGateCanFail's locust-errors
	// row runs it
	if !strings.Contains(marks, "environment.process_exit_code = 0") {
		t.Errorf("the marks file leaves Locust's exit code 1 on failed requests:\n%s", marks)
	}
	req.Locustfile = "# the spec's own\n"
	files, err = Locust{}.Files(req)
	if err != nil || files["locustfile.py"] != req.Locustfile || files["orchbench_window.py"] == "" {
		t.Errorf("with the spec's locustfile: %v, %v", files, err)
	}
}
