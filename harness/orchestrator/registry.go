package orchestrator

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/orchbench/orchbench/harness/nodeprobe"
)

// Config is what any adapter may need to reach its orchestrator; each
// reads the fields it uses and ignores the rest.
type Config struct {
	// NomadAddr and ConsulAddr default to NOMAD_ADDR / CONSUL_HTTP_ADDR,
	// then the embedded cluster's loopback addresses.
	NomadAddr, ConsulAddr string
	// DockerHost defaults to DOCKER_HOST, then the local socket.
	DockerHost string
	// LoadImage is the image of the load generator's one-shot job;
	// LoadJobFile the Nomad job file that runs it.
	LoadImage, LoadJobFile string
	// LoadJobPrefix starts the IDs of the jobs that run a study's own load
	// tool (default DefaultLoadJobPrefix); any other prefix renames
	// orchbench's generator job too (<prefix>-loadgen).
	LoadJobPrefix string
	// Progress, when set, receives a line whenever a deployment's state changes.
	Progress io.Writer
	// Nodes reads the kernel of the node a task runs on (its limits, its
	// process); nil reads every node from this machine.
	Nodes nodeprobe.Resolver
	// MetricsURL is the Prometheus API autoscalers read their metrics from
	// (the cluster's VictoriaMetrics).
	MetricsURL string
}

// Factory connects an adapter.
type Factory func(Config) (Orchestrator, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Factory{}
)

// Register makes an adapter available by name; adapters call it from init.
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("orchestrator: " + name + " registered twice")
	}
	registry[name] = f
}

// Names lists the registered orchestrators, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Registered reports whether name is an adapter in this binary.
func Registered(name string) bool {
	registryMu.Lock()
	defer registryMu.Unlock()
	_, ok := registry[name]
	return ok
}

// New connects the named adapter.
func New(name string, cfg Config) (Orchestrator, error) {
	registryMu.Lock()
	f, ok := registry[name]
	registryMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("orchestrator %q is not known; known: %s", name, strings.Join(Names(), ", "))
	}
	o, err := f(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return o, nil
}
