package loadgen

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
)

// WorkloadFactory builds a workload from its whole spec ("name" or
// "name:args"), so a package's own spec parser can be registered as is.
type WorkloadFactory func(spec string) (Workload, error)

var workloads = struct {
	sync.RWMutex
	m map[string]WorkloadFactory
}{m: map[string]WorkloadFactory{}}

// RegisterWorkload makes a Go workload selectable by name (orchbench load
// -w NAME[:ARGS]). Packages register from init; loadgen itself imports none
// of them, so the dependency points from the workload to the generator.
// Registering a name twice panics: the second would silently win otherwise.
func RegisterWorkload(name string, factory WorkloadFactory) {
	if name == "" || strings.ContainsRune(name, ':') || factory == nil {
		panic(fmt.Sprintf("loadgen: bad workload registration %q", name))
	}
	workloads.Lock()
	defer workloads.Unlock()
	if _, dup := workloads.m[name]; dup {
		panic(fmt.Sprintf("loadgen: workload %q registered twice", name))
	}
	workloads.m[name] = factory
}

// WorkloadNames lists the registered workloads, sorted.
func WorkloadNames() []string {
	workloads.RLock()
	defer workloads.RUnlock()
	names := make([]string, 0, len(workloads.m))
	for n := range workloads.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// WorkloadByName builds the workload a spec "name[:args]" names.
func WorkloadByName(spec string) (Workload, error) {
	name, _, _ := strings.Cut(spec, ":")
	workloads.RLock()
	f, ok := workloads.m[name]
	workloads.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown workload %q (registered: %s)", name, strings.Join(WorkloadNames(), ", "))
	}
	w, err := f(spec)
	if err != nil {
		return nil, fmt.Errorf("workload %q: %w", spec, err)
	}
	return w, nil
}

func init() {
	RegisterWorkload("get-paths", getPaths)
}

// getPaths is "get-paths:/a,/b": GETs spread uniformly over the paths. It
// is the smallest useful mix, for tests and for spreading a cache's keys.
func getPaths(spec string) (Workload, error) {
	_, args, _ := strings.Cut(spec, ":")
	var paths []string
	for _, p := range strings.Split(args, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if !strings.HasPrefix(p, "/") {
				return nil, fmt.Errorf("path %q does not start with /", p)
			}
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("want get-paths:/a,/b,...")
	}
	return WorkloadFunc(func(rng *rand.Rand) Request {
		return Request{Method: "GET", Path: paths[rng.IntN(len(paths))]}
	}), nil
}
