package gates

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/results"
)

func TestShippingGate(t *testing.T) {
	agentTask := []results.TaskCPU{{Task: "otelcol", Cores: 0.04}}
	cases := []struct {
		name   string
		rec    results.Shipping
		err    error
		passed bool
		detail string
	}{
		{"off and quiet", results.Shipping{Mode: "off", ProcessLooks: 31}, nil, true, "no node agent ran during the load (31 looks at the node's processes, one a second)"},
		// nothing seen because nothing was looked at is no pass
		{"off, never looked", results.Shipping{Mode: "off"}, nil, false, `shipping = "off": the node's processes were never looked at`},
		{"off, /proc unreadable", results.Shipping{Mode: "off", ProcessLooks: 3, ProcessError: "the node's processes: permission denied"}, nil, false,
			`whether an agent ran could not be seen (3 looks succeeded): the node's processes: permission denied`},
		{"off but the agent ran", results.Shipping{Mode: "off", Processes: []string{"otelcol-orchbench (pid 42)"}}, nil, false,
			`shipping = "off" was declared, but otelcol-orchbench (pid 42) ran`},
		// an agent someone started by hand is shipping as much as ours
		{"off but a stray vector ran", results.Shipping{Mode: "off", Processes: []string{"vector (pid 7)"}}, nil, false, "vector (pid 7)"},
		{"on and running", results.Shipping{Mode: "on", Agent: "orchbench-agent", Cores: 0.04, Tasks: agentTask}, nil, true, "agent 0.040 cores"},
		{"on but no agent task", results.Shipping{Mode: "on"}, nil, false, "no node agent task ran"},
		// a process without a Nomad task is not the agent whose cost is measured
		{"on, only a stray process", results.Shipping{Mode: "on", Processes: []string{"vector (pid 7)"}}, nil, false, "no node agent task ran"},
		{"unset, no agent on the cluster", results.Shipping{Mode: "on", Undeclared: true}, nil, false, "sets no shipping"},
		{"on, unreadable", results.Shipping{Mode: "on"}, errors.New("no cgroup"), false, "could not be read: no cgroup"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := ShippingGate(c.rec, c.err)
			if g.Name != Shipping || g.Passed != c.passed || g.NotChecked != c.rec.Undeclared || !strings.Contains(g.Detail, c.detail) {
				t.Errorf("gate = %+v, want passed=%v with %q", g, c.passed, c.detail)
			}
		})
	}
}
