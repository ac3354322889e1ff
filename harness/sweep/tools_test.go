package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/testutil"
	"github.com/orchbench/orchbench/harness/toolload"
)

// A tool whose output is missing or garbled leaves the step invalid, with
// a reason naming the runner.
func TestToolRunnerBadOutputMakesStepInvalid(t *testing.T) {
	// the result file is the argument after -json
	writeOut := `while [ $# -gt 1 ]; do if [ "$1" = -json ]; then out=$2; fi; shift; done; `
	for name, c := range map[string]struct{ script, want string }{
		"garbled":   {writeOut + `echo '{"RunType": "HTTP", "Actual' >"$out"`, "load runner fortio: fortio result: invalid character"},
		"missing":   {`echo all done`, "load runner fortio left no result"},
		"exit code": {`echo boom >&2; exit 3`, "load runner fortio: exit status 3: boom"},
	} {
		t.Run(name, func(t *testing.T) {
			run := LocalToolRunner{Tool: toolload.Fortio{}, Binary: testutil.ShellScript(t, "fortio", c.script)}
			req := orchestrator.LoadRequest{Bound: 10 * time.Second, Tool: toolload.Request{URL: "http://127.0.0.1:1/", Connections: 2, Duration: time.Second}}
			res, _, err := run.Run(context.Background(), req)
			g := gates.CompleteGate(res, err, time.Second, run.Name())
			sr := results.StepResult{Gates: []results.Gate{g}}
			sr.Decide()
			if sr.Outcome != results.OutcomeInvalid || !strings.Contains(strings.Join(sr.Reasons, "; "), c.want) {
				t.Fatalf("outcome %s, reasons %q; want invalid naming %q", sr.Outcome, sr.Reasons, c.want)
			}
		})
	}
}

func TestIterationScriptQuotes(t *testing.T) {
	s := iterationScript([]experiment.Request{{Method: "GET", Path: "/books"}, {Method: "POST", Path: "/books", Body: "{\"t\":\"a\\b\"}\n", ContentType: "application/json"}})
	for _, want := range []string{`{"GET", "/books", nil, nil},`, `{"POST", "/books", "{\034t\034:\034a\092b\034}\010", "application/json"},`} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %s:\n%s", want, s)
		}
	}
}

// The closed-loop figure per core used divides by the measured service's
// instances only.
func TestServiceCPU(t *testing.T) {
	sr := results.StepResult{AchievedRPS: 1000}
	serviceCPU(&sr, []results.TaskCPU{{AllocID: "a", Cores: 0.25}, {AllocID: "b", Cores: 0.25}, {AllocID: "db", Cores: 1}},
		[]orchestrator.Endpoint{{Instance: "a"}, {Instance: "b"}})
	if sr.ServiceCores != 0.5 || sr.QPSPerCore != 2000 {
		t.Fatalf("cores %g, rps/core %g", sr.ServiceCores, sr.QPSPerCore)
	}
}

// loadgenChildEnv makes this test binary run orchbench's closed loop once
// (TestLoadgenChild), so the differential test can pin it like fortio.
const loadgenChildEnv = "ORCHBENCH_LOADGEN_CHILD"

func TestLoadgenChild(t *testing.T) {
	spec := os.Getenv(loadgenChildEnv)
	if spec == "" {
		t.Skip("run by TestClosedLoopMatchesFortio")
	}
	var req toolload.Request
	if err := json.Unmarshal([]byte(spec), &req); err != nil {
		t.Fatal(err)
	}
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: req.URL, Threads: 1, Connections: req.Connections, Duration: req.Duration,
		Warmup: req.Warmup, Closed: &loadgen.Closed{}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	fmt.Printf("RESULT %s\n", b)
}

// Our closed loop at max rate and Fortio's -qps -1, with the same
// connections and duration, each pinned to the same single CPU, against the
// same server, side by side, must measure throughputs within 5 % of each other. The
// server takes 2 ms a request, so it, not either generator, sets the pace.
func TestClosedLoopMatchesFortio(t *testing.T) {
	fortio, err := exec.LookPath("fortio")
	if err != nil {
		if p, _ := filepath.Abs("../../.tools/bin/fortio"); fileExists(p) {
			fortio = p
		} else {
			testenv.Missing(t, "no fortio on PATH or in .tools/bin (cluster/tools.sh fortio)")
		}
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		testenv.Missing(t, "no taskset to pin the generators")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		w.Write([]byte("The result of this run is :  0.1234567890123"))
	}))
	defer srv.Close()
	req := toolload.Request{URL: srv.URL + "/", Connections: 8, Warmup: 500 * time.Millisecond, Duration: 3 * time.Second}

	// Both run at once, each pinned to CPU 0, so whatever else the machine
	// does at that moment (a shared CI runner) weighs on both alike.
	pinned := testutil.ShellScript(t, "fortio", "exec taskset -c 0 "+fortio+` "$@"`)
	type fortioRun struct {
		res *loadgen.Result
		err error
	}
	fch := make(chan fortioRun, 1)
	go func() {
		res, _, err := LocalToolRunner{Tool: toolload.Fortio{}, Binary: pinned}.Run(context.Background(), orchestrator.LoadRequest{Bound: time.Minute, Tool: req})
		fch <- fortioRun{res, err}
	}()
	spec, _ := json.Marshal(req)
	cmd := exec.Command("taskset", "-c", "0", os.Args[0], "-test.run=^TestLoadgenChild$")
	cmd.Env = append(os.Environ(), loadgenChildEnv+"="+string(spec))
	out, err := cmd.CombinedOutput()
	f := <-fch
	if f.err != nil {
		t.Fatal(f.err)
	}
	fres := f.res
	if err != nil {
		t.Fatalf("our closed loop: %v\n%s", err, out)
	}
	_, line, ok := strings.Cut(string(out), "RESULT ")
	if !ok {
		t.Fatalf("our closed loop printed no result:\n%s", out)
	}
	line, _, _ = strings.Cut(line, "\n")
	var ours loadgen.Result
	if err := json.Unmarshal([]byte(line), &ours); err != nil {
		t.Fatal(err)
	}
	ratio := ours.AchievedRate / fres.AchievedRate
	t.Logf("8 connections, 3 s, CPU 0: orchbench closed loop %.1f rps (p50 %s), fortio -qps -1 %.1f rps (p50 %s); ratio %.3f",
		ours.AchievedRate, p50(ours), fres.AchievedRate, p50(*fres), ratio)
	if ours.Errors.Total()+ours.Errors.Status > 0 || fres.Accounting.Errors > 0 {
		t.Fatalf("errors: ours %+v, fortio %s", ours.Errors, fres.Accounting)
	}
	if ratio < 0.95 || ratio > 1.05 {
		t.Fatalf("throughputs differ by more than 5 %%: ours %.1f, fortio %.1f rps", ours.AchievedRate, fres.AchievedRate)
	}
}

func p50(r loadgen.Result) time.Duration {
	for _, p := range r.Latency.Percentiles {
		if p.Percentile == 50 {
			return time.Duration(p.Value) * time.Microsecond
		}
	}
	return 0
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// noTools is an orchestrator without ToolRunners (as Swarm and Kubernetes
// are for now).
type noTools struct{ orchestrator.Orchestrator }

func (noTools) Name() string { return "swarm" }

func TestLoadRunnerChoice(t *testing.T) {
	fortio := experiment.Load{Runner: experiment.RunnerFortio}
	r := &Runner{}
	if _, err := r.loadRunner(noTools{}, fortio); err == nil || !strings.Contains(err.Error(), "load runner fortio: the swarm adapter cannot run it as a job yet") {
		t.Fatalf("a tool on an adapter without tool jobs: %v", err)
	}
	r.Load = LocalRunner{}
	got, err := r.loadRunner(noTools{}, fortio)
	if err != nil || got.Name() != "local/fortio" {
		t.Fatalf("--load-runner local with fortio: %v, %v", got, err)
	}
	if got, _ := r.loadRunner(noTools{}, experiment.Load{}); got.Name() != "local" {
		t.Fatalf("ours with --load-runner local: %s", got.Name())
	}
	if _, err := r.loadRunner(noTools{}, experiment.Load{Runner: "k6"}); err == nil || !strings.Contains(err.Error(), `load runner "k6" is not a tool of this build; tools: artillery, fortio, jmeter, locust`) {
		t.Fatalf("an unknown tool: %v", err)
	}
}

func mustToolRequest(t *testing.T, st experiment.Step, url string) toolload.Request {
	t.Helper()
	req, err := toolRequest(st, url)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// A spec's locustfile and spawn rate reach Locust: the file as it is, the
// rate as -r; a locustfile gone since the spec was read is the step's
// error, naming it.
func TestLocustfileAndSpawnRateReachLocust(t *testing.T) {
	file := filepath.Join(t.TempDir(), "flow.py")
	const flow = "from locust import HttpUser\n# the study's flow\n"
	if err := os.WriteFile(file, []byte(flow), 0o644); err != nil {
		t.Fatal(err)
	}
	st := experiment.Step{Users: 50, Duration: 60 * time.Second, Load: experiment.Load{Kind: experiment.LoadClosed,
		Runner: experiment.RunnerLocust, Locustfile: file, SpawnRate: 1}}
	req := mustToolRequest(t, st, "http://127.0.0.1:1/voting/")
	files, err := toolload.Locust{}.Files(req)
	if err != nil || files["locustfile.py"] != flow {
		t.Fatalf("files %v, %v: want the spec's locustfile as it is", files, err)
	}
	_, run, err := toolload.Locust{}.Command(req, "/in", "/out")
	if err != nil || !strings.Contains(strings.Join(run, " "), "-u 50 -r 1 ") {
		t.Fatalf("command %v, %v: want 50 users spawned at 1 a second", run, err)
	}
	st.Load.Locustfile = filepath.Join(t.TempDir(), "gone.py")
	if _, err := toolRequest(st, "http://127.0.0.1:1/"); err == nil || !strings.Contains(err.Error(), "gone.py") {
		t.Fatalf("a missing locustfile: %v", err)
	}
}
