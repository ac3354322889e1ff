package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Facts are what the preflight learnt of a host.
type Facts struct {
	Arch      string // uname -m
	OS        string // ID and VERSION_ID of /etc/os-release
	Docker    bool   // a dockerd is installed already
	MemoryMiB int
	// MemoryLimitMiB is the host's cgroup memory limit (0: none or unreadable).
	MemoryLimitMiB int
	CPUs           int
	Systemd        bool
}

// HostError is one host's failure, named.
type HostError struct {
	Host Host
	Step string
	Err  error
}

func (e *HostError) Error() string { return fmt.Sprintf("%s: %s: %v", e.Host, e.Step, e.Err) }
func (e *HostError) Unwrap() error { return e.Err }

// HostErrors are every failing host of one step, in inventory order.
type HostErrors []*HostError

func (es HostErrors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// oneHostAtATime runs f on each host in turn and stops at the first
// failure: the servers of a raft, which must not all restart at once.
func oneHostAtATime(hosts []Host, f func(Host) error) error {
	for _, h := range hosts {
		if err := f(h); err != nil {
			var he *HostError
			if !errors.As(err, &he) {
				he = &HostError{Host: h, Err: err}
			}
			return HostErrors{he}
		}
	}
	return nil
}

// eachHost runs f on every host at once and gathers the failures.
func eachHost(hosts []Host, f func(Host) error) error {
	var mu sync.Mutex
	var errs HostErrors
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Add(1)
		go func(h Host) {
			defer wg.Done()
			if err := f(h); err != nil {
				var he *HostError
				if !errors.As(err, &he) {
					he = &HostError{Host: h, Step: "", Err: err}
				}
				mu.Lock()
				errs = append(errs, he)
				mu.Unlock()
			}
		}(h)
	}
	wg.Wait()
	if len(errs) == 0 {
		return nil
	}
	order := map[string]int{}
	for i, h := range hosts {
		order[h.Name] = i
	}
	sort.Slice(errs, func(i, j int) bool { return order[errs[i].Host.Name] < order[errs[j].Host.Name] })
	return errs
}

// factsScript prints key=value lines and changes nothing on the host.
const factsScript = `set -u
echo "arch=$(uname -m)"
. /etc/os-release 2>/dev/null && echo "os=${ID:-?} ${VERSION_ID:-?}"
[ -d /run/systemd/system ] && echo systemd=yes || echo systemd=no
command -v dockerd >/dev/null && echo docker=yes || echo docker=no
echo "cpus=$(nproc)"
awk '/^MemTotal:/ {print "memory_mib=" int($2/1024)}' /proc/meminfo
# the host's memory budget when it is a container or a slice with a limit
cg=$(awk -F: '$2 == "memory" {print $3}' /proc/1/cgroup)
if [ -n "$cg" ] && [ -r "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes" ]; then echo "memory_limit=$(cat "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes")"
else cg=$(awk -F: '$1 == "0" {print $3}' /proc/1/cgroup); [ -r "/sys/fs/cgroup$cg/memory.max" ] && echo "memory_limit=$(cat "/sys/fs/cgroup$cg/memory.max")"; fi
true`

// Preflight proves every host reachable, its key accepted, root through
// sudo without a password, systemd present and the architecture the
// binaries are built for, all before anything is changed anywhere: one
// host's wrong key stops the run with no host touched.
func Preflight(ctx context.Context, inv *Inventory, kh *knownHosts) (map[string]Facts, error) {
	var mu sync.Mutex
	facts := map[string]Facts{}
	err := eachHost(inv.Hosts, func(h Host) error {
		c, err := Dial(ctx, h, kh, 15*time.Second)
		if err != nil {
			return &HostError{Host: h, Step: "ssh", Err: err}
		}
		defer c.Close()
		out, err := c.Run(factsScript, nil)
		if err != nil {
			if h.User != "root" && strings.Contains(err.Error(), "password is required") {
				return &HostError{Host: h, Step: "sudo", Err: fmt.Errorf("user %s needs sudo without a password (a line '%s ALL=(ALL) NOPASSWD:ALL' in /etc/sudoers.d/): %w", h.User, h.User, err)}
			}
			return &HostError{Host: h, Step: "facts", Err: err}
		}
		f := parseFacts(out)
		var problems []string
		if f.Arch != "x86_64" {
			problems = append(problems, fmt.Sprintf("architecture %s: the pinned binaries are built for x86_64", f.Arch))
		}
		if !f.Systemd {
			problems = append(problems, "no systemd (/run/systemd/system): hashi-up installs the agents as systemd services")
		}
		if !strings.HasPrefix(f.OS, "debian ") {
			problems = append(problems, fmt.Sprintf("OS %q: remote up installs Debian's packages (Debian 12)", f.OS))
		}
		if len(problems) > 0 {
			return &HostError{Host: h, Step: "preflight", Err: errors.New(strings.Join(problems, "; "))}
		}
		mu.Lock()
		facts[h.Name] = f
		mu.Unlock()
		return nil
	})
	return facts, err
}

func parseFacts(out string) Facts {
	var f Facts
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		switch k {
		case "arch":
			f.Arch = v
		case "os":
			f.OS = v
		case "systemd":
			f.Systemd = v == "yes"
		case "docker":
			f.Docker = v == "yes"
		case "cpus":
			fmt.Sscan(v, &f.CPUs)
		case "memory_mib":
			fmt.Sscan(v, &f.MemoryMiB)
		case "memory_limit":
			var limit int64
			if _, err := fmt.Sscan(v, &limit); err == nil {
				f.MemoryLimitMiB = int(limit >> 20)
			}
		}
	}
	return f
}

// newKnownHosts keeps the hosts' keys in the state directory.
func newKnownHosts(inv *Inventory) *knownHosts {
	return &knownHosts{path: filepath.Join(inv.StateDir, "known_hosts")}
}

func ipLike(s string) bool { return net.ParseIP(s) != nil }

// Check runs the preflight alone.
func Check(ctx context.Context, inv *Inventory) (map[string]Facts, error) {
	if err := os.MkdirAll(inv.StateDir, 0o700); err != nil {
		return nil, err
	}
	return Preflight(ctx, inv, newKnownHosts(inv))
}
