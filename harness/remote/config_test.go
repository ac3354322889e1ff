package remote

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func testInventory(t *testing.T) *Inventory {
	t.Helper()
	dir := t.TempDir()
	writeKey(t, dir)
	src := strings.Replace(goodInventory, `host "s1" {`, `host "s0" {
  address = "10.0.0.10"
  role    = "server"
}
host "s2" {
  address = "10.0.0.12"
  role    = "server"
}
host "s1" {`, 1)
	inv, err := ParseInventory([]byte(src), filepath.Join(dir, "lab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

var testSecrets = &Secrets{ConsulGossip: "Z29zc2lwLWtleS1mb3ItdGVzdHMtMzItYnl0ZXMhIQ==", NomadGossip: "bm9tYWQtZ29zc2lwLWtleS10ZXN0cy0zMi1ieXRlcyE=",
	ConsulManagement: "11111111-1111-4111-8111-111111111111", ConsulAgent: "22222222-2222-4222-8222-222222222222", ConsulNomad: "33333333-3333-4333-8333-333333333333"}

func toolBin(t *testing.T, name string) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join("..", "..", ".tools", "bin", name))
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("ORCHBENCH_TEST_STRICT") != "" {
			t.Fatalf("%s is missing: ./justw tools", p)
		}
		t.Skipf("%s is missing: ./justw tools", p)
	}
	return p
}

// The rendered configurations are what the pinned agents accept: checked
// by their own validate commands, with the certificates at the paths the
// configuration names swapped for files of this test.
func TestAgentConfigsValidate(t *testing.T) {
	inv := testInventory(t)
	for _, h := range []Host{inv.Servers()[0], inv.Workers()[0]} {
		ah := agentHost{Host: h, Index: 1, MemoryMiB: 2048}
		dir := t.TempDir()
		for _, f := range []string{"ca.pem", h.Name + ".pem", h.Name + "-key.pem"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		consul := strings.ReplaceAll(consulConfig(inv, ah, testSecrets), consulConfigDir, dir)
		nomad := strings.ReplaceAll(nomadConfig(inv, ah, testSecrets, "10.0.0.10:5000"), nomadConfigDir, dir)
		if err := os.WriteFile(filepath.Join(dir, "consul.hcl"), []byte(consul), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "nomad.hcl"), []byte(nomad), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(toolBin(t, "consul"), "validate", "-quiet", filepath.Join(dir, "consul.hcl")).CombinedOutput(); err != nil {
			t.Errorf("%s: consul validate: %v\n%s\n%s", h.Name, err, out, consul)
		}
		if out, err := exec.Command(toolBin(t, "nomad"), "config", "validate", filepath.Join(dir, "nomad.hcl")).CombinedOutput(); err != nil {
			t.Errorf("%s: nomad config validate: %v\n%s\n%s", h.Name, err, out, nomad)
		}
		server := h.Role == RoleServer
		if got := strings.Contains(consul, testSecrets.ConsulManagement); got != server {
			t.Errorf("%s: the management token in its Consul configuration: %v, want %v (servers only)", h.Name, got, server)
		}
		if got := strings.Contains(nomad, "bootstrap_expect = 3"); got != server {
			t.Errorf("%s: a Nomad server of 3: %v, want %v", h.Name, got, server)
		}
		if !server && !strings.Contains(nomad, `"orchbench.frontend" = "true"`) {
			t.Errorf("worker 1 holds the front end, as on the emulated nodes:\n%s", nomad)
		}
	}
}
