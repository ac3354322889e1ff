package wrongsetup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
)

// Every sweep the validity tests run is a spec the parser takes, with one
// step per row, on the single node and on the emulated nodes alike: a row
// the parser refused would fail the whole sweep, not its gate.
func TestSpecsParse(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	lua := filepath.Join(t.TempDir(), "forward.lua")
	if err := os.WriteFile(lua, []byte("function setup(thread)\n  thread.addr = \"127.0.0.1:1\"\nend\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exec := strings.NewReplacer(FaultyVars, `driver = "exec", app_source = "test/integration/testdata/faulty-server.js"`, "{forward_lua}", lua)
	image := strings.NewReplacer(FaultyVars, `driver = "docker", image = "orchbench/taewa:faulty"`, "{forward_lua}", lua)
	for _, c := range []struct {
		name, orch string
		rows       []Row
		fill       *strings.Replacer
	}{
		{"single node", "nomad", Nomad, exec},
		{"nodes", "nomad", OnNodes(Nomad), image},
		{"swarm", "swarm", append(append([]Row{}, Elsewhere...), ToolEntrySwarm), strings.NewReplacer()},
		{"kubernetes", "kubernetes", Elsewhere, strings.NewReplacer()},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := Spec("validity", c.orch, c.rows, c.fill)
			s, err := experiment.Parse([]byte(src), "validity.hcl", experiment.Options{BaseDir: root, Orchestrators: []string{"nomad", "swarm", "kubernetes"}})
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			steps := experiment.Plan(s)
			if len(steps) != len(c.rows) {
				t.Fatalf("%d steps, want one per row (%d)", len(steps), len(c.rows))
			}
			for _, st := range steps {
				if c.name == "nodes" && !st.ShippingOff() {
					t.Errorf("%s declares shipping %q on the nodes, which run no node agent", st.App, st.Shipping)
				}
			}
		})
	}
}

// OnNodes leaves a row that already declares shipping off as it is, so
// that no block says it twice, gives the rows of other gates the nodes'
// lag bound, and changes nothing else.
func TestOnNodes(t *testing.T) {
	rows := OnNodes(Nomad)
	for i, r := range rows {
		if n := strings.Count(r.Block, shippingOff); n != 1 {
			t.Errorf("%s: shipping = \"off\" %d times", r.App, n)
		}
		if strings.Contains(Nomad[i].Block, LenientLag) != strings.Contains(r.Block, NodesLenientLag) || strings.Contains(r.Block, LenientLag) {
			t.Errorf("%s: the lenient lag bound not replaced by the nodes' one:\n%s", r.App, r.Block)
		}
		back := strings.Replace(r.Block, NodesLenientLag, LenientLag, 1)
		if !strings.HasPrefix(back, Nomad[i].Block) || r.App != Nomad[i].App || r.Gate != Nomad[i].Gate || r.Want != Nomad[i].Want {
			t.Errorf("%s changed beyond its shipping and lag bound: %+v", r.App, r)
		}
	}
	stray, rest := Split(rows, "shipping-stray")
	if len(stray) != 1 || len(rest) != len(rows)-1 {
		t.Errorf("split: %d and %d rows", len(stray), len(rest))
	}
}
