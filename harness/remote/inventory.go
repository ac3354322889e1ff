// Package remote brings Consul, Nomad and Docker up on a user's own
// machines over SSH (docs/remote.md): an inventory names the hosts and
// their roles, a preflight proves every host reachable before anything is
// installed, and the agents are installed with hashi-up, with TLS, gossip
// encryption and ACLs whose secrets stay on the harness machine.
package remote

import (
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Role is what a host does in the cluster, as on the emulated nodes
// (docs/cluster.md): servers hold Consul's and Nomad's raft and manage the
// swarm and run no application; workers run the application; the client
// runs the load generator, the registry and the metrics store, so that
// load never competes with the application for a worker's CPU.
type Role string

const (
	RoleServer Role = "server"
	RoleWorker Role = "worker"
	RoleClient Role = "client"
)

// Host is one machine of the inventory.
type Host struct {
	Name    string
	Address string
	Role    Role
	User    string
	Key     string // path of the private key
	Port    int
	// Decl is where the host block is, for errors that name it.
	Decl hcl.Range
}

// SSHAddr is host:port for the SSH dial.
func (h Host) SSHAddr() string { return net.JoinHostPort(h.Address, fmt.Sprint(h.Port)) }

func (h Host) String() string {
	return fmt.Sprintf("host %s (%s, user %s, key %s)", h.Name, h.SSHAddr(), h.User, h.Key)
}

// Inventory is a parsed, validated inventory file.
type Inventory struct {
	Path       string
	Datacenter string
	// StateDir keeps what remote up made for this cluster on the harness
	// machine: the CA and certificates, the gossip keys, the tokens, the
	// hosts' SSH keys as first seen. Mode 0700.
	StateDir string
	Hosts    []Host
}

// Servers, Workers and Clients return the hosts of one role, in file order.
func (inv *Inventory) Servers() []Host { return inv.byRole(RoleServer) }
func (inv *Inventory) Workers() []Host { return inv.byRole(RoleWorker) }
func (inv *Inventory) Clients() []Host { return inv.byRole(RoleClient) }

func (inv *Inventory) byRole(r Role) []Host {
	var out []Host
	for _, h := range inv.Hosts {
		if h.Role == r {
			out = append(out, h)
		}
	}
	return out
}

type fileSchema struct {
	Datacenter string      `hcl:"datacenter,optional"`
	StateDir   string      `hcl:"state_dir,optional"`
	SSH        *sshSchema  `hcl:"ssh,block"`
	Hosts      []hostBlock `hcl:"host,block"`
}

type sshSchema struct {
	User string `hcl:"user,optional"`
	Key  string `hcl:"key,optional"`
	Port int    `hcl:"port,optional"`
}

type hostBlock struct {
	Name    string `hcl:"name,label"`
	Address string `hcl:"address"`
	Role    string `hcl:"role"`
	User    string `hcl:"user,optional"`
	Key     string `hcl:"key,optional"`
	Port    int    `hcl:"port,optional"`
}

// InventoryError carries every problem of an inventory, each with file and line.
type InventoryError struct{ Diags hcl.Diagnostics }

func (e *InventoryError) Error() string {
	var b strings.Builder
	for i, d := range e.Diags {
		if i > 0 {
			b.WriteString("\n")
		}
		if d.Subject != nil {
			b.WriteString(d.Subject.String() + ": ")
		}
		b.WriteString(d.Summary)
		if d.Detail != "" {
			b.WriteString("; " + d.Detail)
		}
	}
	return b.String()
}

var (
	namePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	dnsPattern  = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$`)
)

// LoadInventory reads and validates the inventory at path. Every problem is
// reported at once, each naming the file and line.
func LoadInventory(path string) (*Inventory, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("inventory %s: %w", path, err)
	}
	return ParseInventory(src, path)
}

// ParseInventory validates an inventory held in memory; relative key paths
// and the state directory are resolved against filename's directory.
func ParseInventory(src []byte, filename string) (*Inventory, error) {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, &InventoryError{diags}
	}
	var s fileSchema
	if diags := gohcl.DecodeBody(f.Body, nil, &s); diags.HasErrors() {
		return nil, &InventoryError{diags}
	}
	body := f.Body.(*hclsyntax.Body)
	dir := filepath.Dir(filename)
	inv := &Inventory{Path: filename, Datacenter: s.Datacenter}
	var problems hcl.Diagnostics
	bad := func(r hcl.Range, summary, detail string) {
		rr := r
		problems = append(problems, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rr})
	}
	attrRange := func(b *hclsyntax.Body, name string, fallback hcl.Range) hcl.Range {
		if a, ok := b.Attributes[name]; ok {
			return a.Expr.Range()
		}
		return fallback
	}
	if inv.Datacenter == "" {
		inv.Datacenter = "dc1"
	} else if !namePattern.MatchString(inv.Datacenter) {
		bad(attrRange(body, "datacenter", body.SrcRange), fmt.Sprintf("datacenter %q", inv.Datacenter), "lower-case letters, digits and dashes, as Consul and Nomad accept")
	}
	defUser, defKey, defPort := "root", "", 22
	var sshBody *hclsyntax.Body
	if s.SSH != nil {
		for _, b := range body.Blocks {
			if b.Type == "ssh" {
				sshBody = b.Body
			}
		}
		if s.SSH.User != "" {
			defUser = s.SSH.User
		}
		defKey = s.SSH.Key
		if s.SSH.Port != 0 {
			defPort = s.SSH.Port
		}
	}
	var hostBodies []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == "host" {
			hostBodies = append(hostBodies, b)
		}
	}
	names := map[string]bool{}
	addrs := map[string]string{}
	for i, hb := range s.Hosts {
		blk := hostBodies[i]
		h := Host{Name: hb.Name, Address: hb.Address, Role: Role(hb.Role), User: hb.User, Key: hb.Key, Port: hb.Port, Decl: blk.DefRange()}
		if !namePattern.MatchString(h.Name) {
			bad(blk.LabelRanges[0], fmt.Sprintf("host %q: a name of lower-case letters, digits and dashes is needed", h.Name), "it becomes the Consul and Nomad node name")
		} else if names[h.Name] {
			bad(blk.LabelRanges[0], fmt.Sprintf("host %q is declared twice", h.Name), "")
		}
		names[h.Name] = true
		if net.ParseIP(h.Address) == nil && !dnsPattern.MatchString(h.Address) {
			bad(attrRange(blk.Body, "address", blk.DefRange()), fmt.Sprintf("host %s: address %q is neither an IP address nor a host name", h.Name, h.Address), "")
		} else if other, dup := addrs[h.Address]; dup {
			bad(attrRange(blk.Body, "address", blk.DefRange()), fmt.Sprintf("host %s: address %s is also host %s's", h.Name, h.Address, other), "every host needs an address of its own")
		}
		addrs[h.Address] = h.Name
		switch h.Role {
		case RoleServer, RoleWorker, RoleClient:
		default:
			bad(attrRange(blk.Body, "role", blk.DefRange()), fmt.Sprintf("host %s: unknown role %q", h.Name, hb.Role), "one of server, worker, client")
		}
		if h.User == "" {
			h.User = defUser
		}
		if h.Port == 0 {
			h.Port = defPort
		}
		if h.Port < 1 || h.Port > 65535 {
			bad(attrRange(blk.Body, "port", blk.DefRange()), fmt.Sprintf("host %s: port %d", h.Name, h.Port), "an SSH port from 1 to 65535")
		}
		keyRange := attrRange(blk.Body, "key", blk.DefRange())
		if h.Key == "" {
			h.Key = defKey
			if sshBody != nil {
				keyRange = attrRange(sshBody, "key", keyRange)
			}
		}
		if h.Key == "" {
			bad(blk.DefRange(), fmt.Sprintf("host %s: no SSH key", h.Name), "set key in the host block or in the ssh block (passwords are not supported: the key is what remote up proves on every host before it changes any)")
		} else {
			h.Key = expandPath(h.Key, dir)
			if _, err := os.Stat(h.Key); err != nil {
				bad(keyRange, fmt.Sprintf("host %s: SSH key %s cannot be read", h.Name, h.Key), err.Error())
			}
		}
		inv.Hosts = append(inv.Hosts, h)
	}
	servers, workers, clients := len(inv.Servers()), len(inv.Workers()), len(inv.Clients())
	switch {
	case len(s.Hosts) == 0:
		bad(body.SrcRange, "no host blocks", `declare each machine as host "NAME" { address = "...", role = "server" }`)
	case servers != 1 && servers != 3 && servers != 5:
		bad(body.SrcRange, fmt.Sprintf("%d servers", servers), "1, 3 or 5: raft needs an odd number, and 1 tolerates no loss")
	case workers == 0:
		bad(body.SrcRange, "no worker", "the application runs on the workers; at least one host needs role = \"worker\"")
	case clients != 1:
		bad(body.SrcRange, fmt.Sprintf("%d clients", clients), "exactly one host with role = \"client\": it runs the load generator, the registry and the metrics store")
	}
	if len(problems) > 0 {
		return nil, &InventoryError{problems}
	}
	inv.StateDir = s.StateDir
	if inv.StateDir == "" {
		// one directory per inventory file, wherever it is: two files
		// both named inventory.hcl are two clusters
		abs, err := filepath.Abs(filename)
		if err != nil {
			abs = filename
		}
		base := strings.TrimSuffix(filepath.Base(filename), filepath.Ext(filename))
		inv.StateDir = filepath.Join(".state", "remote", fmt.Sprintf("%s-%x", base, sha256.Sum256([]byte(abs)))[:len(base)+9])
	} else {
		inv.StateDir = expandPath(inv.StateDir, dir)
	}
	// the tools remote up runs work in directories of their own
	if abs, err := filepath.Abs(inv.StateDir); err == nil {
		inv.StateDir = abs
	}
	return inv, nil
}

func expandPath(p, dir string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p
}
