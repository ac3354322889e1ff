package gates

import (
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

func TestToolGeneratorGate(t *testing.T) {
	window := func(cores, limit float64) ToolCPU {
		return ToolCPU{Cores: cores, WindowSeconds: 30, LimitCores: limit, Source: "cgroup /docker/x"}
	}
	idle := ServiceUse{Used: 0.21, Limit: 1}
	for name, c := range map[string]struct {
		tool           string
		cpu            ToolCPU
		generatorCores float64
		toolMax        float64
		svc            ServiceUse
		passed, notChk bool
		detail         string
	}{
		"under its cap": {"locust", window(0.02, 0.05), 0.05, 1, idle, true, false,
			"locust used 0.02 cores over the 30.0 s window, 40 % of its generator_cores = 0.05 (bound 90 %)"},
		"its whole cap": {"locust", window(0.049, 0.05), 0.05, 1, idle, false, false,
			"locust saturated: locust used 0.049 cores over the 30.0 s window, 98 % of its generator_cores = 0.05 (bound 90 %), while the service used only 0.21 of its 1 cores (21 %)"},
		"its quota, rounded": {"fortio", window(0.048, 0.0496), 0.05, 0, idle, false, false,
			"fortio saturated: fortio used 0.048 cores over the 30.0 s window, 96 % of its generator_cores = 0.05 (bound 90 %), while the service used only 0.21 of its 1 cores (21 %)"},
		"a node smaller than declared": {"fortio", window(1.9, 2), 4, 0, idle, false, false,
			"fortio saturated: fortio used 1.9 cores over the 30.0 s window, 95 % of the 2 cores it ran under (bound 90 %), while the service used only 0.21 of its 1 cores (21 %)"},
		"its own one core": {"locust", window(0.97, 2), 4, 1, idle, false, false,
			"locust saturated: locust used 0.97 cores over the 30.0 s window, 97 % of the 1 core locust can use (bound 90 %), while the service used only 0.21 of its 1 cores (21 %)"},
		"the node's cores": {"fortio", window(1.9, 2), 0, 0, ServiceUse{Used: 3}, false, false,
			"fortio saturated: fortio used 1.9 cores over the 30.0 s window, 95 % of the 2 cores it ran under (bound 90 %), while the service used 3 cores under no CPU quota it could have spent"},
		"service saturated": {"locust", window(0.049, 0.05), 0.05, 1, ServiceUse{Used: 0.98, Limit: 1}, true, false,
			"locust used 0.049 cores over the 30.0 s window, 98 % of its generator_cores = 0.05 (bound 90 %); the service used 98 % of its 1 cores, so it, not locust, set the pace"},
		"held by its quota in most periods": {"fortio", ToolCPU{Cores: 0.042, WindowSeconds: 3, LimitCores: 0.05, Quota: true, Throttled: 0.72}, 0.05, 0, idle, false, false,
			"fortio saturated: fortio used 0.042 cores over the 3.0 s window, 84 % of its generator_cores = 0.05 (bound 90 %), throttled in 72 % of its CFS periods (bound 50 %), while the service used only 0.21 of its 1 cores (21 %)"},
		"under its quota, rarely throttled": {"fortio", ToolCPU{Cores: 0.042, WindowSeconds: 3, LimitCores: 0.05, Quota: true, Throttled: 0.1}, 0.05, 0, idle, true, false,
			"fortio used 0.042 cores over the 3.0 s window, 84 % of its generator_cores = 0.05 (bound 90 %), throttled in 10 % of its CFS periods (bound 50 %)"},
		"cpu unknown": {"locust", ToolCPU{Unknown: "docker inspect load-1: no such container"}, 0.05, 1, idle, false, true,
			"locust's CPU was not measured (docker inspect load-1: no such container), so whether it saturated is unknown"},
		"no ceiling": {"fortio", window(1.9, 0), 0, 0, idle, false, true,
			"fortio used 1.9 cores over the 30.0 s window; with no generator_cores declared, no ceiling of its own and no cap read, there is nothing to judge its saturation against"},
	} {
		t.Run(name, func(t *testing.T) {
			g := ToolGeneratorGate(c.tool, c.cpu, c.generatorCores, c.toolMax, c.svc)
			if g.Name != Generator || g.Passed != c.passed || g.NotChecked != c.notChk || g.Breaks || g.Detail != c.detail {
				t.Fatalf("got %+v\nwant passed %v, not checked %v, detail\n%s", g, c.passed, c.notChk, c.detail)
			}
		})
	}
}

func TestToolEntryGate(t *testing.T) {
	a := orchestrator.Endpoint{Address: "127.0.0.1", Port: 24001, Entry: orchestrator.EntryHostPort, Instance: "a"}
	b := orchestrator.Endpoint{Address: "127.0.0.1", Port: 24002, Entry: orchestrator.EntryHostPort, Instance: "b"}
	g := ToolEntryGate("fortio", []orchestrator.Endpoint{a, b})
	if g.Passed || g.NotChecked || g.Breaks || g.Detail != `fortio takes one URL, but the service has 2 instances at 127.0.0.1:24001, 127.0.0.1:24002: it would load only the first; use runner = "orchbench", which spreads connections over them, or a variant with one instance` {
		t.Fatalf("two host ports: %+v", g)
	}
	if g := ToolEntryGate("fortio", []orchestrator.Endpoint{a}); !g.Passed || g.Detail != "fortio loads the service's one entry 127.0.0.1:24001" {
		t.Fatalf("one instance: %+v", g)
	}
	np := orchestrator.Endpoint{Address: "127.0.0.1", Port: 30080, Entry: orchestrator.EntryNodePort}
	if g := ToolEntryGate("locust", []orchestrator.Endpoint{np}); !g.Passed || !strings.HasSuffix(g.Detail, "127.0.0.1:30080 (a node port, which spreads connections over the instances)") {
		t.Fatalf("a node port: %+v", g)
	}
}
