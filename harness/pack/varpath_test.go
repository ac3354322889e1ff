package pack

import (
	"strings"
	"testing"
)

func TestDottedVariablePathsInTemplates(t *testing.T) {
	p := loadFixture(t, "paths")
	r := mustRender(t, p, nil)
	wantContains(t, r.Files["paths.nomad"],
		`mode      = "bridge"`, `first     = "db:6379"`, `team      = "bench"`, `prefixed  = "bridge"`, `chosen    = "bridge"`)

	for where, want := range map[string]string{
		"network.mdoe":        `variable path "network.mdoe": network has no attribute "mdoe" (it has: mode, ports)`,
		"network.ports.3":     `network.ports is a list of 1; "3" is not an index into it`,
		"network.mode.length": `network.mode is a string, which has no attribute "length"`,
		"netwrok.mode":        `no variable "netwrok" is declared in testdata/paths/variables.hcl (declared: labels, network, where)`,
	} {
		_, err := p.Render(map[string]string{"where": where}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("var %q: error %v\nwant it to contain %s", where, err, want)
		}
	}
}

func TestDottedVariablePathsOnTheCommandLine(t *testing.T) {
	p := loadFixture(t, "paths")
	r := mustRender(t, p, map[string]string{
		"network.mode":      "host",
		"paths.labels.tier": "front", // the pack-name prefix, then a new map key
	})
	wantContains(t, r.Files["paths.nomad"], `mode      = "host"`, `first     = "db:6379"`, `label_team = "bench"`, `label_tier = "front"`)

	// a whole-object override first, then one attribute of it
	r = mustRender(t, p, map[string]string{
		"network":      `{ mode = "bridge", ports = [{ name = "http", port = 80 }] }`,
		"network.mode": "none",
	})
	wantContains(t, r.Files["paths.nomad"], `mode      = "none"`, `first     = "http:80"`)

	for key, want := range map[string]string{
		"network.bogus":      `--var network.bogus=1: network has no attribute "bogus" (it has: mode, ports)`,
		"network.ports.name": `network.ports is a list(object({name=string,port=number})); only attributes of objects and keys of maps can be set by path`,
		"other.mode":         `refers to pack "other", but this pack is "paths"`,
	} {
		_, err := p.Render(map[string]string{key: "1"}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--var %s: error %v\nwant it to contain %s", key, err, want)
		}
	}
}
