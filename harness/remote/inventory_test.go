package remote

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func writeKey(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "id_test")
	if err := os.WriteFile(p, []byte("not read by the parser"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodInventory = `datacenter = "lab"
ssh {
  user = "debian"
  key  = "id_test"
}
host "s1" {
  address = "10.0.0.11"
  role    = "server"
}
host "w1" {
  address = "10.0.0.21"
  role    = "worker"
  user    = "root"
  port    = 2222
}
host "c" {
  address = "client.lab.example"
  role    = "client"
}
`

func TestParseInventory(t *testing.T) {
	dir := t.TempDir()
	key := writeKey(t, dir)
	inv, err := ParseInventory([]byte(goodInventory), filepath.Join(dir, "lab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Datacenter != "lab" || len(inv.Hosts) != 3 {
		t.Fatalf("parsed %+v", inv)
	}
	w := inv.Workers()[0]
	if w.User != "root" || w.Port != 2222 || w.Key != key || w.SSHAddr() != "10.0.0.21:2222" {
		t.Errorf("worker: %+v", w)
	}
	if s := inv.Servers()[0]; s.User != "debian" || s.Port != 22 || s.Key != key {
		t.Errorf("server takes the ssh block's defaults: %+v", s)
	}
	if !filepath.IsAbs(inv.StateDir) || !strings.Contains(inv.StateDir, filepath.Join(".state", "remote", "lab-")) {
		t.Errorf("state dir %s", inv.StateDir)
	}
	other, _ := ParseInventory([]byte(goodInventory), filepath.Join(dir, "sub", "lab.hcl"))
	if other != nil && other.StateDir == inv.StateDir {
		t.Error("two inventories of the same name in two directories share a state directory")
	}
}

// Every problem of an inventory is reported at once, each with its file,
// line and column, before any host is dialled.
func TestParseInventoryErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	writeKey(t, dir)
	file := filepath.Join(dir, "bad.hcl")
	cases := []struct {
		name, src string
		want      []string
	}{
		{"syntax", "host \"a\" {\n  address = \n}\n", []string{`bad.hcl:2,13-3,1: Invalid expression`}},
		{"unknown attribute", "colour = \"blue\"\n", []string{`bad.hcl:1,1-7: Unsupported argument`}},
		{"role, address, key, count", `ssh { key = "id_test" }
host "s1" {
  address = "10.0.0.11"
  role    = "sever"
}
host "s2" {
  address = "10.0.0.11"
  role    = "server"
}
host "w1" {
  address = "10.0.0.21"
  role    = "worker"
  key     = "missing_key"
}
host "c" {
  address = "not an address"
  role    = "client"
}
`, []string{
			`bad.hcl:4,13-20: host s1: unknown role "sever"; one of server, worker, client`,
			`bad.hcl:7,13-24: host s2: address 10.0.0.11 is also host s1's`,
			`bad.hcl:13,13-26: host w1: SSH key \S+missing_key cannot be read`,
			`bad.hcl:16,13-29: host c: address "not an address" is neither an IP address nor a host name`,
		}},
		{"two servers", `ssh { key = "id_test" }
host "s1" {
  address = "10.0.0.11"
  role = "server"
}
host "s2" {
  address = "10.0.0.12"
  role = "server"
}
host "w" {
  address = "10.0.0.21"
  role = "worker"
}
host "c" {
  address = "10.0.0.10"
  role = "client"
}
`, []string{`bad.hcl:1,1-\d+,\d+: 2 servers; 1, 3 or 5`}},
		{"no key", `host "s1" {
  address = "10.0.0.11"
  role = "server"
}
`, []string{`bad.hcl:1,1-10: host s1: no SSH key`}},
		{"duplicate name", `ssh { key = "id_test" }
host "a" {
  address = "10.0.0.11"
  role = "server"
}
host "a" {
  address = "10.0.0.12"
  role = "worker"
}
`, []string{`bad.hcl:6,6-9: host "a" is declared twice`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseInventory([]byte(c.src), file)
			var ie *InventoryError
			if !errors.As(err, &ie) {
				t.Fatalf("want an InventoryError, got %v", err)
			}
			for _, w := range c.want {
				if !regexp.MustCompile(w).MatchString(err.Error()) {
					t.Errorf("the error does not match %q:\n%s", w, err)
				}
			}
		})
	}
}

// The example a user copies parses, once its key exists.
func TestInventoryExampleParses(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "cluster", "inventory.example.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := writeKey(t, dir)
	src = []byte(strings.ReplaceAll(string(src), "~/.ssh/id_ed25519", key))
	inv, err := ParseInventory(src, filepath.Join(dir, "lab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Servers()) != 3 || len(inv.Workers()) != 2 || len(inv.Clients()) != 1 || inv.Clients()[0].User != "admin" {
		t.Errorf("parsed %+v", inv.Hosts)
	}
}
