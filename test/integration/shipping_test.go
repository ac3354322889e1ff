//go:build integration

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

// Two configurations of Taewa, 20 s of load each: one with the node agent
// shipping, one with shipping off. Seed 4 runs the shipped one first. The
// generator may lag 50 ms: the test measures what the agent ships, and a
// step the generator gate called invalid on a busy CI machine would fail
// it for another reason (and cannot be run again: the order matters here).
const shipSpec = `
sweep "ship" {
  seed          = 4
  repetitions   = 1
  warmup        = "2s"
  duration      = "20s"
  cooldown      = "0s"
  orchestrators = ["nomad"]

  app "taewa" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { resource_scale = 0.25, job_name = "taewa-shipped" }
    rates       = [40]
    threads     = 1
    connections = 4
    max_generator_lag = "50ms"
  }
  app "quiet" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { resource_scale = 0.25, job_name = "taewa-unshipped" }
    rates       = [40]
    threads     = 1
    connections = 4
    max_generator_lag = "50ms"
    shipping    = "off"
  }
}
`

// logLine is one line VictoriaLogs returns, with the fields the agent sets.
type logLine struct {
	Time    time.Time `json:"_time"`
	Msg     string    `json:"_msg"`
	Job     string    `json:"nomad.job"`
	Group   string    `json:"nomad.group"`
	Task    string    `json:"nomad.task"`
	AllocID string    `json:"nomad.alloc_id"`
	Stream  string    `json:"log.stream"`
}

func logsQuery(query string) ([]logLine, error) {
	resp, err := http.PostForm("http://127.0.0.1:9428/select/logsql/query", url.Values{"query": {query}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("VictoriaLogs answered %s", resp.Status)
	}
	var out []logLine
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%w in %s", err, sc.Text())
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

var summaryRE = regexp.MustCompile(`taewa: summary #(\d+): `)

// summaries returns the summary numbers of an allocation's lines, sorted,
// and complains about any gap or duplicate: Taewa numbers every summary
// line it writes, so a lost or doubled line shows.
func summaries(lines []logLine) ([]int, error) {
	var nums []int
	for _, l := range lines {
		if m := summaryRE.FindStringSubmatch(l.Msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	if len(nums) == 0 {
		return nil, fmt.Errorf("no summary lines among %d", len(lines))
	}
	for i, n := range nums {
		if n != i+1 {
			return nums, fmt.Errorf("summary lines are not 1..%d exactly once: position %d holds #%d (%v)", len(nums), i, n, nums)
		}
	}
	return nums, nil
}

// TestShippingLogsMetricsAndCost runs a sweep with the node agent shipping
// and with it stopped, while VictoriaLogs is down for the first step, and
// checks that every log line of both steps arrives exactly once with its
// Nomad job, group, task and allocation; that host metrics and the log
// counters reach VictoriaMetrics; that the report records the agent's CPU
// for the shipped step and none for the other; and that the VictoriaLogs
// and Consul web UIs show them in headless Chromium.
func TestShippingLogsMetricsAndCost(t *testing.T) {
	status := must(t, root+"/cluster/embedded.sh", "status")
	for _, want := range []string{"victorialogs: healthy", "node agent: shipping", "consul ui:      http://127.0.0.1:8500/ui/", "logs (vmui):    http://127.0.0.1:9428/select/vmui/"} {
		if !strings.Contains(status, want) {
			t.Errorf("cluster status does not say %q", want)
		}
	}

	work := t.TempDir()
	spec := filepath.Join(work, "ship.hcl")
	if err := os.WriteFile(spec, []byte(shipSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	resultsDir := filepath.Join(work, "results")
	archive := results.Archive{Dir: resultsDir}
	cmd := exec.Command(orchbench, "sweep", "-f", spec, "--dir", resultsDir, "--reports", filepath.Join(work, "reports"))
	cmd.Dir = root
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		must(t, root+"/cluster/embedded.sh", "up") // VictoriaLogs back whatever happened
	}()

	// VictoriaLogs goes down as the sweep starts and comes back once the
	// first (shipped) step is archived: the agent must hold that step's lines
	must(t, root+"/.tools/bin/nomad", "job", "stop", "-detach", "victorialogs")
	eventually(t, time.Minute, "VictoriaLogs stops answering", func() error {
		if _, err := logsQuery("*"); err == nil {
			return fmt.Errorf("still answering")
		}
		return nil
	})
	downAt := time.Now()
	var sweepID string
	eventually(t, 3*time.Minute, "the first step is archived", func() error {
		m := regexp.MustCompile(`sweep (ship-\S+):`).FindStringSubmatch(out.String())
		if m == nil {
			return fmt.Errorf("no sweep ID yet; output:\n%s", out.String())
		}
		sweepID = m[1]
		done, err := archive.CompletedSteps(sweepID)
		if err == nil && len(done) == 0 {
			err = fmt.Errorf("no step archived yet")
		}
		return err
	})
	upAt := time.Now()
	must(t, root+"/cluster/jobs.sh", "deploy", "victorialogs")
	t.Logf("VictoriaLogs was down for %.0f s", upAt.Sub(downAt).Seconds())
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("sweep: %v\n%s", err, out.String())
		}
	case <-time.After(4 * time.Minute):
		t.Fatalf("the sweep did not end within 4 min:\n%s", out.String())
	}
	t.Logf("sweep output:\n%s", out.String())
	if !strings.Contains(out.String(), "node agent orchbench-agent running again") {
		t.Error("the sweep did not start the node agent again after the shipping-off step")
	}

	steps, err := archive.LoadSteps(sweepID)
	if err != nil {
		t.Fatal(err)
	}
	var shipped, quiet results.StepResult
	for _, s := range steps {
		switch s.App {
		case "taewa":
			shipped = s
		case "quiet":
			quiet = s
		}
	}
	if shipped.Step == "" || quiet.Step == "" {
		t.Fatalf("steps missing: %d archived", len(steps))
	}
	if !shipped.Start.Before(quiet.Start) || shipped.End.After(upAt) {
		t.Fatalf("the shipped step (%s–%s) did not run first, while VictoriaLogs was down (until %s)", shipped.Start, shipped.End, upAt)
	}

	// the agent's cost: recorded for the shipped step, absent from the other
	for _, s := range []results.StepResult{shipped, quiet} {
		if s.Outcome != results.OutcomeValid {
			t.Errorf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
		}
	}
	on, ok := results.ShippingOf(shipped)
	if !ok || on.Mode != "on" || on.Agent != "orchbench-agent" || len(on.Tasks) != 1 || on.Cores <= 0 || on.ResidentBytes <= 0 {
		t.Errorf("shipped step's shipping record: %+v", on)
	}
	off, ok := results.ShippingOf(quiet)
	if !ok || off.Mode != "off" || len(off.Tasks) != 0 || off.Cores != 0 || len(off.Processes) != 0 {
		t.Errorf("shipping-off step's record: %+v", off)
	}
	t.Logf("agent while shipping: %.4f cores, %.1f MiB resident", on.Cores, float64(on.ResidentBytes)/(1<<20))

	// every line of both steps arrives exactly once, with its Nomad fields
	for _, c := range []struct {
		step results.StepResult
		job  string
	}{{shipped, "taewa-shipped"}, {quiet, "taewa-unshipped"}} {
		var lines []logLine
		seen, steadySince := -1, time.Now()
		eventually(t, 2*time.Minute, c.job+"'s log lines in VictoriaLogs", func() error {
			var err error
			if lines, err = logsQuery(fmt.Sprintf(`nomad.job:%q`, c.job)); err != nil {
				return err
			}
			if len(lines) != seen {
				seen, steadySince = len(lines), time.Now()
			}
			// Taewa writes a summary at the first tick after a second with
			// requests, so the last one is timed within a second after the
			// load's last request, which may come a little before the
			// step's end (and the tick with it); then no more lines may be
			// on their way (the agent ships in batches of a second)
			last := false
			for _, l := range lines {
				if summaryRE.MatchString(l.Msg) && l.Time.After(c.step.End.Add(-1500*time.Millisecond)) {
					last = true
				}
			}
			switch {
			case !last:
				return fmt.Errorf("%d lines so far, none from the load's last second (before %s)", len(lines), c.step.End)
			case time.Since(steadySince) < 5*time.Second:
				return fmt.Errorf("%d lines, still arriving", len(lines))
			}
			return nil
		})
		// the step's allocation is the one that logged during it (an earlier
		// run of the test may have left lines of the same job)
		byAlloc := map[string][]logLine{}
		stepAlloc := ""
		inStep := 0
		for _, l := range lines {
			if l.Group != "taewa" || l.Task != "taewa" || len(l.AllocID) != 36 || (l.Stream != "stdout" && l.Stream != "stderr") {
				t.Errorf("%s: a line without its Nomad fields: %+v", c.job, l)
				break
			}
			byAlloc[l.AllocID] = append(byAlloc[l.AllocID], l)
			if !l.Time.Before(c.step.Start) && !l.Time.After(c.step.End) {
				inStep++
				if stepAlloc != "" && stepAlloc != l.AllocID {
					t.Errorf("%s: two allocations logged during the step: %s and %s", c.job, stepAlloc, l.AllocID)
				}
				stepAlloc = l.AllocID
			}
		}
		nums, err := summaries(byAlloc[stepAlloc])
		if err != nil {
			t.Errorf("%s, allocation %s: %v", c.job, stepAlloc, err)
		}
		// one summary a second under load, timed by the line itself: shipped
		// late (VictoriaLogs down, or the agent stopped), it keeps its time
		if want := int(c.step.End.Sub(c.step.Start).Seconds()) - 2; inStep < want {
			t.Errorf("%s: %d lines timed inside the step's %s, want at least %d", c.job, inStep, c.step.End.Sub(c.step.Start), want)
		}
		t.Logf("%s: allocation %s wrote %d lines, summaries #1..#%d each once, %d inside the step", c.job, stepAlloc, len(byAlloc[stepAlloc]), len(nums), inStep)
	}

	// the node's metrics and the log counters reach VictoriaMetrics
	for _, q := range []string{`system_cpu_time_seconds_total{state="user"}`, `system_memory_usage_bytes{state="used"}`, `orchbench_log_records_total{nomad_job="taewa-shipped"}`} {
		if n, err := vmSeries(q); err != nil || n == 0 {
			t.Errorf("VictoriaMetrics has no %s: %d series, %v", q, n, err)
		}
	}

	// the report: the agent's CPU per step and each step's log link
	report, err := os.ReadFile(filepath.Join(work, "reports", sweepID, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="shipping"`, "Steps with shipping on: 1", "steps with shipping off: 1", "stopped", "in VictoriaLogs"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	ui, _, ok := results.StepLogs(shipped)
	if !ok {
		t.Fatal("the shipped step has no log link")
	}
	page := uiText(t, ui, "taewa: summary #", `nomad.group="taewa"`)
	if n := len(summaryRE.FindAllString(page, -1)); n < 10 {
		t.Errorf("VictoriaLogs' web UI shows %d of the step's summary lines through the report's link, want at least 10", n)
	}

	// Consul's web UI lists the cluster's services; Nomad's lists its jobs
	uiText(t, "http://127.0.0.1:8500/ui/dc1/services", "victorialogs", "victoriametrics", "orchbench-agent", "nomad-client")
	must(t, root+"/cluster/nomad-ui-check.sh", "http://127.0.0.1:4646", "victorialogs", "orchbench-agent")
}
