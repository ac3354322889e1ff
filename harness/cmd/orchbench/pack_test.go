package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclparse"
)

// runPack runs `orchbench pack ARGS...` on a fresh command tree, so the test
// does not depend on (or disturb) the global root command's flag state.
func runPack(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newPackCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestPackRenderTaewaVerticalIsTwiceBaseline(t *testing.T) {
	// mhz_per_core is given so the figures do not depend on whether a cluster answers
	base, err := runPack(t, "render", "taewa", "--var", "variant=baseline", "--var", "resource_scale=0.25", "--var", "mhz_per_core=2100")
	if err != nil {
		t.Fatal(err)
	}
	vert, err := runPack(t, "render", "taewa", "--var", "variant=vertical", "--var", "resource_scale=0.25", "--var", "mhz_per_core=2100")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, cpu, mem string }{
		{base, "cpu    = 525", "memory = 256"},
		{vert, "cpu    = 1050", "memory = 512"},
	} {
		if !strings.Contains(c.out, c.cpu) || !strings.Contains(c.out, c.mem) {
			t.Errorf("want %q and %q in:\n%s", c.cpu, c.mem, c.out)
		}
		if !strings.HasPrefix(c.out, "# packs/taewa/templates/taewa.nomad.tpl\n") && !strings.Contains(c.out, "taewa.nomad.tpl\n") {
			t.Errorf("output should name the template it came from:\n%s", c.out)
		}
		// The header is an HCL comment, so the output pipes into `nomad job run -`.
		if _, diags := hclparse.NewParser().ParseHCL([]byte(c.out), "stdout"); diags.HasErrors() {
			t.Errorf("render output is not HCL: %s", diags)
		}
	}
}

func TestPackRenderVarFileAndErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "vars.hcl")
	if err := os.WriteFile(file, []byte("taewa.variant = \"horizontal\"\nscale = 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runPack(t, "render", "taewa", "-f", file)
	if err != nil || !strings.Contains(out, "count = 4") {
		t.Errorf("-f with both key forms: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "taewa", "--var", "variant=bogus"}, "valid variants are: baseline, vertical, horizontal, unlimited"},
		{[]string{"render", "taewa", "--var", "scale=abc"}, "--var scale=abc: a number is required"},
		{[]string{"render", "taewa", "--var", "novalue"}, `--var "novalue": expected name=value`},
		{[]string{"render", "nosuchpack"}, `pack "nosuchpack" not found`},
	} {
		_, err := runPack(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestPackRenderToDirectory(t *testing.T) {
	dir := t.TempDir()
	out, err := runPack(t, "render", "taewa", "-o", dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "taewa.nomad")
	if strings.TrimSpace(out) != path {
		t.Errorf("render -o printed %q", out)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `job "taewa-baseline"`) {
		t.Errorf("written job: %v\n%s", err, b)
	}
}
