package toolload

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/testenv"
)

// study003 at 100 rps: pad 30 s, ramp 60 s to 100, 30 s at 100, pad 30 s.
var study003At100 = []loadgen.Phase{{Dur: 30 * time.Second}, {Dur: time.Minute, To: 100}, {Dur: 30 * time.Second, From: 100, To: 100}, {Dur: 30 * time.Second}}

func TestArtilleryScriptOfAStep(t *testing.T) {
	req := Request{URL: "http://127.0.0.1:24000/hello?x=1", Rate: 100, Duration: 150 * time.Second, Timeout: 1500 * time.Millisecond, Phases: study003At100}
	files, err := Artillery{}.Files(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, warm := files[artilleryWarmup]; warm || len(files) != 2 {
		t.Errorf("files %v: want the script and the processor, no warm-up", keys(files))
	}
	var script struct {
		Config struct {
			Target    string
			Phases    []map[string]float64
			HTTP      map[string]float64
			Processor string
		}
		Before    map[string][]map[string]string
		Scenarios []struct {
			Flow []map[string]map[string]string
		}
	}
	if err := json.Unmarshal([]byte(files[artilleryScript]), &script); err != nil {
		t.Fatal(err)
	}
	wantPhases := []map[string]float64{{"pause": 30}, {"duration": 60, "arrivalRate": 0, "rampTo": 100}, {"duration": 30, "arrivalRate": 100, "rampTo": 100}, {"pause": 30}}
	if !reflect.DeepEqual(script.Config.Phases, wantPhases) {
		t.Errorf("phases %v, want %v", script.Config.Phases, wantPhases)
	}
	if script.Config.Target != "http://127.0.0.1:24000" || script.Config.HTTP["timeout"] != 1.5 || script.Config.Processor != "./"+artilleryProcessor {
		t.Errorf("config %+v", script.Config)
	}
	get := script.Scenarios[0].Flow[0]["get"]
	if len(script.Scenarios) != 1 || len(script.Scenarios[0].Flow) != 1 || get["url"] != "/hello?x=1" || get["beforeRequest"] != "orchbenchSend" || get["afterResponse"] != "orchbenchReceived" {
		t.Errorf("scenarios %+v: want one GET of the path, timed", script.Scenarios)
	}
	if script.Before["flow"][0]["function"] != "orchbenchWatch" {
		t.Errorf("before %+v: the processor does not watch the run", script.Before)
	}
	// 3000 on the ramp, 3000 flat
	if proc := files[artilleryProcessor]; !strings.Contains(proc, `const PLAN = {"path":"/hello?x=1","due":6000,"declared_ms":[30000,60000,30000,30000],"timeout_ms":1500};`) {
		t.Errorf("processor's plan:\n%s", proc[:min(len(proc), 400)])
	}
	warm, run, err := Artillery{}.Command(req, "/local", "/alloc")
	if err != nil || warm != nil || strings.Join(run, " ") != "run --output /alloc/result.json /local/artillery.json" {
		t.Errorf("command %q %q %v", warm, run, err)
	}
}

// Plain rates: the warm-up is its own unrecorded run at the rate, in whole
// seconds, before the measured flat phase.
func TestArtilleryWarmup(t *testing.T) {
	req := Request{URL: "http://127.0.0.1:1/", Rate: 20, Warmup: 2500 * time.Millisecond, Duration: 10 * time.Second, Phases: []loadgen.Phase{{Dur: 10 * time.Second, From: 20, To: 20}}}
	files, err := Artillery{}.Files(req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(files[artilleryWarmup], `"duration": 3,`) || !strings.Contains(files[artilleryWarmup], `"arrivalRate": 20,`) || !strings.Contains(files[artilleryWarmup], `"rampTo": 20`) {
		t.Errorf("warm-up script:\n%s", files[artilleryWarmup])
	}
	warm, _, _ := Artillery{}.Command(req, "/local", "/alloc")
	if strings.Join(warm, " ") != "run --quiet /local/warmup.json" {
		t.Errorf("warm-up %q", warm)
	}
}

func TestArtilleryRefusesWhatItCannotRun(t *testing.T) {
	for name, c := range map[string]struct {
		req  Request
		want string
	}{
		"closed loop":    {Request{URL: "http://127.0.0.1:1/", Connections: 4, Duration: time.Second}, "runs open-loop rates, not 4 users"},
		"half a second":  {Request{URL: "http://127.0.0.1:1/", Phases: []loadgen.Phase{{Dur: 1500 * time.Millisecond, From: 5, To: 5}}}, "phase 1 lasts 1.5s"},
		"fraction":       {Request{URL: "http://127.0.0.1:1/", Phases: []loadgen.Phase{{Dur: time.Second, From: 2.5, To: 2.5}}}, "2.5 arrivals/s"},
		"ramp down to 0": {Request{URL: "http://127.0.0.1:1/", Phases: []loadgen.Phase{{Dur: time.Second, From: 5, To: 0}}}, "ramps down to 0"},
		"bad url":        {Request{URL: "127.0.0.1:1", Phases: []loadgen.Phase{{Dur: time.Second, From: 5, To: 5}}}, "bad URL"},
	} {
		if _, err := (Artillery{}).Files(c.req); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "artillery") {
			t.Errorf("%s: %v, want an error naming artillery and %q", name, err, c.want)
		}
	}
}

// testdata/artillery-2.0.21.json is the real report of Artillery 2.0.21 on
// Debian's Node 18, run on this tool's own script and processor: pad 2 s,
// ramp 5 s to 20/s, 5 s at 20/s, pad 2 s against a loopback HTTP server
// (Python's http.server listing a directory), timeout 1 s.
func TestArtilleryParse(t *testing.T) {
	b, err := os.ReadFile("testdata/artillery-2.0.21.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Artillery{}.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Accounting
	// the phases offer 5·20/2 + 5·20 = 150, and Artillery created 150
	if a.Due != 150 || a.Completed != 150 || a.Unsent != 0 || a.Errors != 0 || !a.Balanced() {
		t.Errorf("accounting %s", a)
	}
	// the window is the phases as they ran, pads included: 14.020 s
	if d := res.DurationSeconds; d < 14.015 || d > 14.025 {
		t.Errorf("window %.3f s, want the four phases' 14.020 s", d)
	}
	if res.Start != time.UnixMilli(1795968135745).UTC() || res.End != time.UnixMilli(1795968149765).UTC() {
		t.Errorf("window %s to %s", res.Start, res.End)
	}
	// the main thread heard of the first phase 300 ms late: its 2 s ended
	// at the worker's ...137754, so it began by ...135754
	late, err := Artillery{}.Parse([]byte(strings.Replace(string(b), `"started_ms": 1795968135745`, `"started_ms": 1795968136045`, 1)))
	if err != nil || late.Start != time.UnixMilli(1795968135754).UTC() {
		t.Errorf("a late start message: window from %v (%v), want the first phase's end less its 2 s", late.Start, err)
	}
	if r := res.AchievedRate; r < 10.69 || r > 10.70 || res.DueRate != res.AchievedRate {
		t.Errorf("achieved %.3f rps, due %.3f: want 150 over the window", r, res.DueRate)
	}
	if res.Latency.Count != 150 || res.Latency.Min != 2864 || res.Latency.Max < 34464 || res.Latency.Max > 34495 {
		t.Errorf("latency %+v", res.Latency)
	}
	if res.StatusCodes[200] != 150 || res.Config.Threads != 1 || (Artillery{}).MaxCoresOf(res) != 1 {
		t.Errorf("codes %v, workers %d", res.StatusCodes, res.Config.Threads)
	}
	if ep := res.Endpoints[0]; ep.Label != "GET /" || ep.Completed != 150 || ep.BodyBytes != 146850 {
		t.Errorf("endpoint %+v", ep)
	}
}

// testdata/artillery-2.0.21-errors.json: 10/s for 3 s, pad 2 s, against a
// server answering every third request 500 and holding every fifth 1.5 s
// past the 1 s timeout.
func TestArtilleryParseErrorsAndTimeouts(t *testing.T) {
	b, err := os.ReadFile("testdata/artillery-2.0.21-errors.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Artillery{}.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Accounting
	if a.Due != 30 || a.Completed != 16 || a.HTTPErrors != 8 || a.Timeouts != 6 || a.SocketErrors != 0 || !a.Balanced() {
		t.Errorf("accounting %s", a)
	}
	if res.Errors.Status != 8 || res.Errors.Timeout != 6 || res.Errors.Classes["ETIMEDOUT"] != 6 || res.Requests != 24 {
		t.Errorf("errors %+v, requests %d", res.Errors, res.Requests)
	}
	if res.Latency.Count != 24 {
		t.Errorf("%d latencies, want the 24 responses'", res.Latency.Count)
	}
	if ep := res.Endpoints[0]; ep.Completed != 16 || ep.BodyBytes != 1600 {
		t.Errorf("endpoint %+v: want only the 200s' bodies", ep)
	}
}

func TestArtilleryParseRefusesGarbage(t *testing.T) {
	good, _ := os.ReadFile("testdata/artillery-2.0.21.json")
	noRecord := strings.Replace(string(good), `"orchbench": {`, `"other": {`, 1)
	noEnd := strings.Replace(string(good), `"ended_ms": 1795968149765`, `"ended_ms": null`, 1)
	for name, c := range map[string]struct{ in, want string }{
		"empty":       {"", "artillery result: unexpected end of JSON input"},
		"no counters": {`{"aggregate": {}}`, "artillery result: no aggregate counters"},
		"no record":   {noRecord, "artillery result: no orchbench record"},
		"cut short":   {noEnd, "artillery result: its 4 phases were not seen from the first one's start to the last one's end"},
	} {
		res, err := Artillery{}.Parse([]byte(c.in))
		if res != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, %v; want no result and %q", name, res != nil, err, c.want)
		}
	}
}

// A report whose counts disagree is refused with the figures, its result
// kept for the archive.
func TestArtilleryResultThatContradictsItselfIsRefused(t *testing.T) {
	good, _ := os.ReadFile("testdata/artillery-2.0.21.json")
	edit := func(old, new string) string {
		if !strings.Contains(string(good), old) {
			t.Fatalf("testdata lacks %q", old)
		}
		return strings.Replace(string(good), old, new, 1)
	}
	for name, c := range map[string]struct{ in, want string }{
		"responses":     {edit(`"http.responses": 150`, `"http.responses": 151`), "http.responses is 151 but its status codes count 150"},
		"untimed":       {edit(`"2864": 1`, `"2864": 2`), "150 responses, but the processor timed 151"},
		"users":         {edit(`"vusers.completed": 150`, `"vusers.completed": 149`), "150 virtual users created, but 149 completed and 0 failed"},
		"overrun":       {edit(`"due": 150`, `"due": 100`), "it created 150 virtual users, more than the 100 its phases offer"},
		"long phases":   {edit(`"ended_ms": 1795968149765`, `"ended_ms": 1795968152765`), "its phases ran 17.0 s, 14.0 s were declared"},
		"sent late":     {edit(`"lastMetricAt": 1795968147771,`, `"lastMetricAt": 1795968155000,`), "its last response came 5.2 s after its phases ended, more than the 1000 ms timeout allows"},
		"bodies":        {edit(`"completed_bodies": 150`, `"completed_bodies": 140`), "150 responses below status 400, but the processor counted 140"},
		"phase missing": {edit(`"index": 2,`, `"index": 7,`), "phase 3 of 4 did not both start and end"},
	} {
		res, err := Artillery{}.Parse([]byte(c.in))
		if res == nil || err == nil || !strings.Contains(err.Error(), "artillery result contradicts itself") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v (result kept: %v), want a contradiction %q", name, err, res != nil, c.want)
		}
	}
}

// The processor's buckets are the HDR histogram's own: a latency recorded
// at its bucket lands where the exact latency would. Run by Node when the
// machine has it.
func TestArtilleryProcessorBucketsAreHDRs(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "no node on this machine to run the processor's bucketing")
	}
	dir := t.TempDir()
	src := artilleryProcessorSource("/", 1, []int64{1000}, time.Second)
	// the module keeps bucket private; expose it for this test only
	src += "\nmodule.exports.bucket = bucket;\n"
	if err := os.WriteFile(filepath.Join(dir, "p.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	values := []int64{0, 1, 999, 2047, 2048, 2049, 2051, 4095, 4096, 4099, 123456, 999999, 1234567, 98765432}
	vs, _ := json.Marshal(values)
	out, err := exec.Command(node, "-e", "const p = require(process.argv[1]); console.log(JSON.stringify("+string(vs)+".map(p.bucket)))", filepath.Join(dir, "p.js")).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	var buckets []int64
	if err := json.Unmarshal(out, &buckets); err != nil {
		t.Fatalf("node said %q: %v", out, err)
	}
	for i, v := range values {
		if v == 0 || buckets[i] > v {
			if buckets[i] != v {
				t.Errorf("bucket(%d) = %d", v, buckets[i])
			}
			continue
		}
		// both land in one bar of the histogram, and no lower value does
		h := hdr.New(1, 3_600_000_000, 3)
		_ = h.RecordValue(v)
		_ = h.RecordValue(buckets[i])
		bars := 0
		for _, b := range h.Distribution() {
			if b.Count > 0 {
				bars++
			}
		}
		below := hdr.New(1, 3_600_000_000, 3)
		_ = below.RecordValue(buckets[i] - 1)
		_ = below.RecordValue(buckets[i])
		split := 0
		for _, b := range below.Distribution() {
			if b.Count > 0 {
				split++
			}
		}
		if bars != 1 || split != 2 {
			t.Errorf("bucket(%d) = %d: same bar %v, lowest of its bar %v", v, buckets[i], bars == 1, split == 2)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
