package experiment

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// nodeFaultSpec is a sweep whose fault block holds body (line 8 on).
func nodeFaultSpec(sweepAttrs, body string) string {
	return fmt.Sprintf(`
sweep "nf" {
  duration = "30s"%s
  app "taewa" {
    variants = ["baseline"]
    rates    = [10]
    fault {
%s
      after = "3s"
    }
  }
}`, sweepAttrs, body)
}

func nodeFaultOpts() Options {
	return Options{Orchestrators: knownOrchestrators, ListVariants: func(string) ([]string, error) { return []string{"baseline"}, nil }}
}

func TestNodeFaultsAreReadIntoThePlan(t *testing.T) {
	for _, c := range []struct {
		body string
		want Fault
	}{
		{`kind = "kill-node"`, Fault{Kind: orchestrator.FaultKillNode}},
		{"kind = \"kill-node\"\nnode = \"fl-worker2\"\nduration = \"20s\"", Fault{Kind: orchestrator.FaultKillNode, Node: "fl-worker2", Duration: 20 * time.Second}},
		{"kind = \"partition-node\"\nduration = \"15s\"", Fault{Kind: orchestrator.FaultPartitionNode, Duration: 15 * time.Second}},
		{`kind = "kill-leader"`, Fault{Kind: orchestrator.FaultKillLeader}},
		{"kind = \"restart-agent\"\nagent = \"consul\"", Fault{Kind: orchestrator.FaultRestartAgent, Agent: "consul"}},
	} {
		s, err := Parse([]byte(nodeFaultSpec("\n  ha = \"on\"", c.body)), "nf.hcl", nodeFaultOpts())
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		st := Plan(s)[0]
		c.want.After = 3 * time.Second
		if st.Fault == nil || *st.Fault != c.want {
			t.Errorf("%s: planned %+v, want %+v", c.body, st.Fault, c.want)
		}
		if st.HA != HAOn {
			t.Errorf("%s: the step's ha is %q, want on", c.body, st.HA)
		}
	}
}

// Every wrong fault block fails with the file, the line of the attribute at
// fault and what would be right.
func TestNodeFaultsRefuseWhatTheyCannotDo(t *testing.T) {
	for _, c := range []struct {
		name, attrs, body string
		single            bool
		want              []string
	}{
		{"unknown kind", "", `kind = "reboot-node"`, false, []string{"nf.hcl:8,", "Unknown fault kind", "kill-node, partition-node, kill-leader, restart-agent"}},
		{"partition without duration", "", `kind = "partition-node"`, false, []string{"nf.hcl:8,", "Missing fault duration", "how long the node stays cut off"}},
		{"restart without agent", "", `kind = "restart-agent"`, false, []string{"nf.hcl:8,", "Missing fault agent", "consul, nomad, kubelet"}},
		{"unknown agent", "", "kind = \"restart-agent\"\nagent = \"vault\"", false, []string{"nf.hcl:9,", "Unknown agent", `"vault"`}},
		{"restart with a duration", "", "kind = \"restart-agent\"\nagent = \"nomad\"\nduration = \"5s\"", false, []string{"nf.hcl:10,", "Invalid fault duration", "takes no duration"}},
		{"leader named", "", "kind = \"kill-leader\"\nnode = \"fl-server2\"", false, []string{"nf.hcl:9,", "Invalid fault node", "no node can be named"}},
		{"instance kind with a node", "", "kind = \"kill-task\"\nnode = \"fl-worker1\"", false, []string{"nf.hcl:9,", "Invalid fault node", "node-level kinds"}},
		{"empty node", "", "kind = \"kill-node\"\nnode = \"\"", false, []string{"nf.hcl:9,", "node is empty"}},
		{"zero duration", "", "kind = \"kill-node\"\nduration = \"0s\"", false, []string{"nf.hcl:9,", "duration must be above 0"}},
		{"single node", "", `kind = "kill-node"`, true, []string{"nf.hcl:8,", "Node fault on a single-node cluster", "just nodes-up nodes=4 servers=3"}},
		{"bad ha", "\n  ha = \"3\"", `kind = "kill-node"`, false, []string{"nf.hcl:4,", "Invalid ha", `"on" (3 servers) or "off" (1 server)`}},
	} {
		opts := nodeFaultOpts()
		opts.SingleNode = c.single
		_, err := Parse([]byte(nodeFaultSpec(c.attrs, c.body)), "nf.hcl", opts)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error lacks %q:\n%v", c.name, w, err)
			}
		}
	}
	// the instance kinds still run on the single node
	opts := nodeFaultOpts()
	opts.SingleNode = true
	if _, err := Parse([]byte(nodeFaultSpec("", `kind = "kill-task"`)), "nf.hcl", opts); err != nil {
		t.Errorf("kill-task on the single node: %v", err)
	}
}

// The example spec parses with every node kind, and is refused on the
// single node with the line of each node fault.
func TestNodeFaultsExampleSpec(t *testing.T) {
	path := filepath.Join("..", "..", "experiments", "social-network-node-faults.hcl")
	opts := Options{Orchestrators: knownOrchestrators, BaseDir: filepath.Join("..", "..")}
	s, err := ParseFile(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[orchestrator.FaultKind]bool{}
	for _, st := range Plan(s) {
		kinds[st.Fault.Kind] = st.HA == HAOn
	}
	if len(kinds) != 4 || !kinds[orchestrator.FaultKillLeader] {
		t.Errorf("planned kinds (ha on) %v", kinds)
	}
	opts.SingleNode = true
	_, err = ParseFile(path, opts)
	if err == nil || strings.Count(err.Error(), "Node fault on a single-node cluster") != 4 || !strings.Contains(err.Error(), "social-network-node-faults.hcl:") {
		t.Errorf("on the single node: %v", err)
	}
}
