package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/toolload"
)

// The tool's CPU is cut to the measured window as the service's is, and a
// runner that saw nothing says so.
func TestToolCPUOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int, cpu float64) limits.Usage {
		return limits.Usage{At: t0.Add(time.Duration(s) * time.Second), CPU: time.Duration(cpu * float64(time.Second))}
	}
	// a second of start-up at a whole core, then 0.5 cores
	run := &orchestrator.ToolRun{CPU: []limits.Usage{at(0, 0), at(1, 1), at(2, 1.5), at(3, 2), at(4, 2.5), at(5, 3)}, LimitCores: 2, CPUSource: "cgroup /x"}
	res := &loadgen.Result{Start: t0.Add(time.Second), End: t0.Add(5 * time.Second)}
	if got := toolCPUOf(run, res); got.Cores != 0.5 || got.WindowSeconds != 4 || got.LimitCores != 2 || got.Unknown != "" || got.Quota {
		t.Fatalf("%+v", got)
	}
	// under a quota: 40 periods in the window, 30 of them throttled
	quota := func(u limits.Usage, periods, throttled int64) limits.Usage {
		u.Periods, u.Throttled = periods, throttled
		return u
	}
	capped := &orchestrator.ToolRun{CPU: []limits.Usage{quota(at(0, 0), 0, 0), quota(at(1, 1), 10, 9), quota(at(5, 3), 50, 39)}, LimitCores: 0.5}
	if got := toolCPUOf(capped, res); !got.Quota || got.Throttled != 0.75 {
		t.Fatalf("capped: %+v", got)
	}
	for name, c := range map[string]struct {
		run  *orchestrator.ToolRun
		want string
	}{
		"no runner's view": {nil, "its runner does not watch it from outside"},
		"unreadable":       {&orchestrator.ToolRun{CPUError: "the tool's task was not seen running"}, "the tool's task was not seen running"},
		"one reading":      {&orchestrator.ToolRun{CPU: []limits.Usage{at(1, 1)}}, "1 readings of its CPU, too few to span the measured window"},
	} {
		if got := toolCPUOf(c.run, res); got.Unknown != c.want {
			t.Errorf("%s: %+v, want %q", name, got, c.want)
		}
	}
}

// fakeLocust writes a shell script standing in for Locust: it spends about
// a second (burning CPU or asleep), then writes a consistent --json-file
// result whose window is that second, between the two marks of
// orchbench_window.py, as Locust 2.47 does.
func fakeLocust(t *testing.T, burn bool) string {
	t.Helper()
	spend := `sleep 1`
	if burn {
		spend = `stop=$(( $(date +%s%N) + 1000000000 )); while [ "$(date +%s%N)" -lt "$stop" ]; do :; done`
	}
	script := `while [ $# -gt 1 ]; do if [ "$1" = --json-file ]; then out=$2.json; fi; shift; done
start=$(date +%s.%N)
` + spend + `
last=$(date +%s.%N)
sec=${start%.*}
cat >"$out" <<EOF
[{"name": "window", "method": "orchbench", "start_time": $start, "last_request_timestamp": $last,
  "num_requests": 2, "num_failures": 0, "total_content_length": 0,
  "response_times": {"0": 2}, "num_reqs_per_sec": {"$sec": 2}, "num_fail_per_sec": {}},
 {"name": "GET /", "method": "GET", "start_time": $start, "last_request_timestamp": $last,
  "num_requests": 100, "num_failures": 0, "total_content_length": 4400,
  "response_times": {"1": 100}, "num_reqs_per_sec": {"$sec": 100}, "num_fail_per_sec": {}}]
EOF`
	p := filepath.Join(t.TempDir(), "locust")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The acceptance case of the tool runners' generator gate: a Locust step
// whose tool used its whole CPU cap, while the service used a fifth of its
// quota, is invalid, and says which tool, how many of its generator_cores,
// and how much of the service's quota. The same step with an idle tool
// is valid.
func TestLocustStepThatUsedItsWholeCPUCapIsInvalid(t *testing.T) {
	const generatorCores = 0.1
	for _, burn := range []bool{true, false} {
		t.Run(fmt.Sprintf("burn=%v", burn), func(t *testing.T) {
			runner := LocalToolRunner{Tool: toolload.Locust{}, Binary: fakeLocust(t, burn)}
			req := orchestrator.LoadRequest{Bound: 20 * time.Second, GeneratorCores: generatorCores,
				Tool: toolload.Request{URL: "http://127.0.0.1:1/", Connections: 4, Duration: 500 * time.Millisecond}}
			res, _, run, err := runLoad(context.Background(), runner, req)
			if run == nil || res == nil || err != nil {
				t.Fatalf("run %+v, result %+v, %v", run, res, err)
			}
			if res.WallSeconds < res.DurationSeconds {
				t.Fatalf("wall %.3f s from the process's end, shorter than the %.3f s window", res.WallSeconds, res.DurationSeconds)
			}
			sr := results.StepResult{Metadata: map[string]any{}}
			sr.Gates = append(sr.Gates, gates.CompleteGate(res, err, req.Tool.Duration, runner.Name()),
				toolGeneratorGate(&sr, "locust", run, res, generatorCores, gates.ServiceUse{Used: 0.21, Limit: 1}))
			sr.Decide()
			gen := sr.Gates[1]
			cpu := sr.Metadata["tool_cpu"].(gates.ToolCPU)
			t.Logf("%s: %s", sr.Outcome, gen.Detail)
			if !burn {
				if sr.Outcome != results.OutcomeValid || !gen.Passed || cpu.Cores >= 0.05 {
					t.Fatalf("an idle tool: %s %v, %+v", sr.Outcome, sr.Reasons, cpu)
				}
				return
			}
			if sr.Outcome != results.OutcomeInvalid || gen.Passed || gen.NotChecked || gen.Breaks || res.Generator.CPUCores != cpu.Cores {
				t.Fatalf("a tool at its cap: %s %v; generator figures %+v, tool CPU %+v", sr.Outcome, sr.Reasons, res.Generator, cpu)
			}
			for _, want := range []string{"locust saturated: locust used ", fmt.Sprintf("of its generator_cores = %g (bound 90 %%)", generatorCores),
				"while the service used only 0.21 of its 1 cores (21 %)"} {
				if !strings.Contains(gen.Detail, want) {
					t.Errorf("detail lacks %q: %s", want, gen.Detail)
				}
			}
		})
	}
}
