package nodes

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Emulated is a cluster of node containers on the project's dockerd, made
// by cluster/nodes.sh: each labelled orchbench.nodes=<Name> and
// orchbench.node.role=<role>, its hostname its container name (so Nomad,
// Consul and Swarm all call it by that name), its agents started by the
// scripts nodes.sh leaves in the node's /etc/obn/run (the node's own unit
// files: what Revive and RestartAgent run again).
type Emulated struct {
	Name string
	// Docker runs the project's docker CLI; exec.CommandContext when nil
	// (tests replace it).
	Docker func(ctx context.Context, args ...string) (string, error)
	// HTTPGet reads a control plane's API; a plain client when nil.
	HTTPGet func(ctx context.Context, url string) ([]byte, error)
	// AgentsUp bounds how long Revive waits for a node's dockerd.
	AgentsUp time.Duration
}

var clusterNameRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,7}$`)

// NewEmulated is the emulated cluster of that name (NODES_NAME).
func NewEmulated(name string) (*Emulated, error) {
	if !clusterNameRE.MatchString(name) {
		return nil, fmt.Errorf("NODES_NAME=%s: a lower-case word of at most 8 letters and digits, as cluster/nodes.sh takes", name)
	}
	return &Emulated{Name: name}, nil
}

// Describe names the cluster.
func (e *Emulated) Describe() string { return "emulated cluster " + e.Name }

func (e *Emulated) docker(ctx context.Context, args ...string) (string, error) {
	if e.Docker != nil {
		return e.Docker(ctx, args...)
	}
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = ProjectDockerEnviron(os.Environ())
	out, err := cmd.CombinedOutput()
	s := strings.TrimSpace(string(out))
	if err != nil {
		return s, fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, s)
	}
	return s, nil
}

// ProjectDockerEnv names the project's dockerd, the one holding the node
// containers, when it is not this machine's socket.
const ProjectDockerEnv = "NODES_DOCKER_HOST"

// ProjectDockerEnviron is env with the Docker CLI pointed at the project's
// dockerd: a sweep on the nodes has DOCKER_HOST (and its TLS settings) at a
// Swarm manager inside the cluster, whose engine holds tasks, not nodes,
// nor the images the harness's machine builds.
func ProjectDockerEnviron(env []string) []string {
	out := make([]string, 0, len(env)+1)
	project := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH":
			continue
		case ProjectDockerEnv:
			project = v
		}
		out = append(out, kv)
	}
	if project != "" {
		out = append(out, "DOCKER_HOST="+project)
	}
	return out
}

// inspectFormat reads one node per line: name, role, running, and the
// address it was given (IPAMConfig survives a stop; IPAddress does not).
func (e *Emulated) inspectFormat() string {
	return fmt.Sprintf(`{{.Name}}|{{index .Config.Labels "orchbench.node.role"}}|{{.State.Running}}|{{with index .NetworkSettings.Networks %q}}{{with .IPAMConfig}}{{.IPv4Address}}{{end}}{{end}}`,
		e.Name+"-nodes")
}

// Nodes lists the cluster's node containers, servers first.
func (e *Emulated) Nodes(ctx context.Context) ([]Node, error) {
	ids, err := e.docker(ctx, "ps", "-aq", "--filter", "label=orchbench.nodes="+e.Name)
	if err != nil {
		return nil, err
	}
	if ids == "" {
		return nil, fmt.Errorf("%s: no node containers (label orchbench.nodes=%s); bring it up with NODES_NAME=%s just nodes-up", e.Describe(), e.Name, e.Name)
	}
	out, err := e.docker(ctx, append([]string{"inspect", "-f", e.inspectFormat()}, strings.Fields(ids)...)...)
	if err != nil {
		return nil, err
	}
	return parseInspect(out)
}

var roleOrder = map[Role]int{RoleServer: 0, RoleWorker: 1, RoleClient: 2}

func parseInspect(out string) ([]Node, error) {
	var all []Node
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 4 {
			return nil, fmt.Errorf("docker inspect: unexpected line %q", line)
		}
		r := Role(f[1])
		if _, ok := roleOrder[r]; !ok {
			return nil, fmt.Errorf("node %s: label orchbench.node.role=%q is not server, worker or client", strings.TrimPrefix(f[0], "/"), f[1])
		}
		all = append(all, Node{Name: strings.TrimPrefix(f[0], "/"), Role: r, Running: f[2] == "true", Address: f[3]})
	}
	slices.SortFunc(all, func(a, b Node) int {
		if d := roleOrder[a.Role] - roleOrder[b.Role]; d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return all, nil
}

// node is a node of this cluster by name: nothing else is ever acted on.
func (e *Emulated) node(ctx context.Context, name string) (Node, error) {
	all, err := e.Nodes(ctx)
	if err != nil {
		return Node{}, err
	}
	n, ok := ByName(all, name)
	if !ok {
		var names []string
		for _, m := range all {
			names = append(names, m.Name)
		}
		return Node{}, fmt.Errorf("%s has no node %q (its nodes: %s)", e.Describe(), name, strings.Join(names, ", "))
	}
	return n, nil
}

// Kill sends the node's init SIGKILL: its PID namespace goes with it, every
// agent and task at once, and its address stops answering.
func (e *Emulated) Kill(ctx context.Context, name string) error {
	n, err := e.node(ctx, name)
	if err != nil {
		return err
	}
	if !n.Running {
		return fmt.Errorf("kill node %s: it is already down", name)
	}
	_, err = e.docker(ctx, "kill", n.Name)
	return err
}

// agentOrder is the order a node's agents start in: the runtime first,
// then Consul, which the Nomad agent registers services with; then
// Kubernetes' (nodes-k8s.sh): etcd before the API server that stores in it,
// the API before its clients, containerd before the kubelet.
var agentOrder = []string{"dockerd", "consul", "nomad",
	"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
	"k8s-balancer", "containerd", "kubelet", "kube-proxy"}

// Revive starts the container again (same address, same volume, so the
// node's dockerd keeps its images and its Swarm membership) and runs its
// agents' start scripts.
func (e *Emulated) Revive(ctx context.Context, name string) error {
	n, err := e.node(ctx, name)
	if err != nil {
		return err
	}
	if n.Running {
		return fmt.Errorf("revive node %s: it is running", name)
	}
	if _, err := e.docker(ctx, "start", n.Name); err != nil {
		return err
	}
	// the killed runtime's pid files name processes that no longer exist,
	// or, after a restart, ones that do and are not it: dockerd and
	// containerd then refuse to start
	if _, err := e.docker(ctx, "exec", n.Name, "rm", "-f", "/var/run/docker.pid", "/var/run/docker/containerd/containerd.pid"); err != nil {
		return fmt.Errorf("revive node %s: %w", name, err)
	}
	present, err := e.docker(ctx, "exec", n.Name, "ls", "/etc/obn/run")
	if err != nil {
		return fmt.Errorf("revive node %s: its start scripts: %w", name, err)
	}
	for _, a := range agentOrder {
		if !slices.Contains(strings.Fields(present), a+".sh") {
			continue
		}
		if _, err := e.docker(ctx, "exec", "-d", n.Name, "sh", "/etc/obn/run/"+a+".sh"); err != nil {
			return fmt.Errorf("revive node %s: start %s: %w", name, a, err)
		}
		if a == "dockerd" {
			if err := e.waitDocker(ctx, n.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Emulated) waitDocker(ctx context.Context, node string) error {
	bound := e.AgentsUp
	if bound == 0 {
		bound = time.Minute
	}
	deadline := time.Now().Add(bound)
	for {
		_, err := e.docker(ctx, "exec", node, "docker", "info")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("revive node %s: its dockerd did not answer within %s: %w", node, bound, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// stopScript stops the agent by the PID its start script recorded (TERM,
// then KILL after 20 s, as systemd would); the caller starts it again
// detached, as nodes.sh did.
const stopScript = `set -eu
a=$1 run=/etc/obn/run/$1.sh pidf=/run/obn/$1.pid
[ -f "$run" ] || { echo "agent $a does not run on this node (no $run)"; exit 3; }
if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
  pid=$(cat "$pidf"); kill -TERM "$pid"
  i=0; while kill -0 "$pid" 2>/dev/null; do i=$((i+1)); [ $i -eq 200 ] && kill -KILL "$pid"; sleep 0.1; done
fi
`

// RestartAgent restarts one agent of a running node.
func (e *Emulated) RestartAgent(ctx context.Context, name string, a Agent) error {
	n, err := e.node(ctx, name)
	if err != nil {
		return err
	}
	if !n.Running {
		return fmt.Errorf("restart %s on node %s: the node is down", a, name)
	}
	if _, err := e.docker(ctx, "exec", n.Name, "sh", "-c", stopScript, "stop", string(a)); err != nil {
		return fmt.Errorf("restart %s on node %s: stop: %w", a, name, err)
	}
	if _, err := e.docker(ctx, "exec", "-d", n.Name, "sh", "/etc/obn/run/"+string(a)+".sh"); err != nil {
		return fmt.Errorf("restart %s on node %s: start: %w", a, name, err)
	}
	return nil
}
