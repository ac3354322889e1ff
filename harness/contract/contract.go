// Package contract is what a pack tells the harness, and nothing else: the
// orchbench_* meta of its rendered Nomad job, read by one parser into typed
// values that the gates, the sweep runner and every orchestrator adapter
// share. A value that does not parse is an error naming the job, the level
// (job, group, task), the key and the value, never a silent default: a
// misspelt limit read as "none" would let any enforced limit pass.
package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// The meta keys of the contract.
const (
	KeyApp           = "orchbench_app"
	KeyVariant       = "orchbench_variant"
	KeyService       = "orchbench_service"
	KeyScaled        = "orchbench_scaled_service"
	KeyLoadPath      = "orchbench_load_path"
	KeyProbePath     = "orchbench_probe_path"
	KeyProbeStatus   = "orchbench_probe_status"
	KeyProbeMinBytes = "orchbench_probe_min_bytes"
	KeyProbeRegex    = "orchbench_probe_regex"
	KeySetupArgs     = "orchbench_setup_args"
	KeySetupTimeout  = "orchbench_setup_timeout"
	KeyVerifyArgs    = "orchbench_verify_args"
	KeyVerifyTimeout = "orchbench_verify_timeout"
	KeyCores         = "orchbench_cores"
	KeyMemoryMiB     = "orchbench_memory_mib"
	KeyCPUMode       = "orchbench_cpu_mode"
	KeyRole          = "orchbench_role"
)

// The prepare hook's keys: it runs on the harness's host before the job is
// deployed.
const (
	KeyPrepareArgs    = "orchbench_prepare_args"
	KeyPrepareTimeout = "orchbench_prepare_timeout"
)

// KeyProbeLoadReference = "false" says that the probe's answer is no size
// for the load's responses at the probe's path (App.ProbeNoLoadReference).
const KeyProbeLoadReference = "orchbench_probe_load_reference"

// Prefix starts every key of the contract.
const Prefix = "orchbench_"

// App is the job-level part of the contract.
type App struct {
	// Job is the job's ID, for messages.
	Job     string
	Name    string
	Variant string
	// Service is the measured service; empty for a job that only supports
	// the app (a datastore job), which is deployed and verified but not loaded.
	Service string
	// Scaled is the service the variant and scale size when the measured
	// service is a balancer in front of it (the study's ELB: frontier's
	// entry before its web tier); empty when it is the measured service.
	Scaled string
	// LoadPath is the request path load is aimed at ("/" when not declared).
	LoadPath string
	// Probe is the app's correctness check; Probe.Path is empty when the
	// pack declares none.
	Probe Probe
	// ProbeNoLoadReference is true when the pack declares
	// orchbench_probe_load_reference = "false": the load's requests at the
	// probe's path are not the probe's request (a workload's searches at
	// random places and dates), so their answers differ in size from the
	// probe's with nothing wrong, and each endpoint is held to its own
	// reference only (a lower level, the warm-up), not to half the probe's
	// body. The probe still checks its own answer before every load.
	ProbeNoLoadReference bool
	Setup                Hook
	Verify               Hook
	// Meta is every orchbench_* key as the pack wrote it, archived with
	// each step so a result says what it was measured against.
	Meta map[string]string
	// Prepare runs on the harness's host before the job is deployed (it
	// has no endpoint yet), e.g. to make the images the job runs.
	Prepare Hook
	// Autoscale is the job's autoscaling policy; nil when it has none.
	Autoscale *Autoscale
}

// Probe is a request whose answer proves the data is there: the status
// code, a minimum body size, and a pattern the body must match.
type Probe struct {
	Path     string
	Status   int
	MinBytes int
	Regex    *regexp.Regexp
}

// Hook is a prepare, setup or verification command: orchbench arguments
// in which "{{endpoint}}" becomes an instance's host:port. Args is nil when
// the pack declares none.
type Hook struct {
	Args    []string
	Timeout time.Duration
}

// Default hook bounds: a dataset load takes minutes, a check less.
const (
	DefaultSetupTimeout  = 30 * time.Minute
	DefaultVerifyTimeout = 5 * time.Minute
)

// DefaultPrepareTimeout bounds a prepare hook, which may make a dataset
// snapshot.
const DefaultPrepareTimeout = 30 * time.Minute

// ParseApp reads the job-level contract of a rendered job.
func ParseApp(job *api.Job) (App, error) {
	meta := job.Meta
	a := App{Job: deref(job.ID), Name: meta[KeyApp], Variant: meta[KeyVariant], Service: meta[KeyService],
		Scaled: meta[KeyScaled], LoadPath: meta[KeyLoadPath], Meta: map[string]string{}}
	for k, v := range meta {
		if strings.HasPrefix(k, Prefix) {
			a.Meta[k] = v
		}
	}
	if a.LoadPath == "" {
		a.LoadPath = "/"
	}
	bad := func(key string, why string) error {
		return fmt.Errorf("job %s: job meta %s = %q %s", a.Job, key, meta[key], why)
	}
	for _, key := range []string{KeyLoadPath, KeyProbePath} {
		if v := meta[key]; v != "" && !requestPath(v) { // empty: not declared
			return a, bad(key, "is not a request path: it starts with / and holds no spaces or control characters")
		}
	}
	a.Probe = Probe{Path: meta[KeyProbePath], Status: http.StatusOK}
	if s, ok := meta[KeyProbeStatus]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 100 || n > 599 {
			return a, bad(KeyProbeStatus, "is not an HTTP status code")
		}
		a.Probe.Status = n
	}
	if s, ok := meta[KeyProbeMinBytes]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return a, bad(KeyProbeMinBytes, "is not a whole number of bytes >= 0")
		}
		a.Probe.MinBytes = n
	}
	if s, ok := meta[KeyProbeRegex]; ok && s != "" {
		re, err := regexp.Compile(s)
		if err != nil {
			return a, bad(KeyProbeRegex, "is not a regular expression: "+err.Error())
		}
		a.Probe.Regex = re
	}
	if s, ok := meta[KeyProbeLoadReference]; ok {
		switch strings.TrimSpace(s) {
		case "true":
		case "false":
			a.ProbeNoLoadReference = true
		default:
			return a, bad(KeyProbeLoadReference, "is not true or false")
		}
	}
	var err error
	if a.Autoscale, err = ParseAutoscale(job); err != nil {
		return a, err
	}
	if a.Prepare, err = parseHook(meta, KeyPrepareArgs, KeyPrepareTimeout, DefaultPrepareTimeout); err != nil {
		return a, fmt.Errorf("job %s: %w", a.Job, err)
	}
	for _, arg := range a.Prepare.Args {
		if strings.Contains(arg, endpointPlaceholder) {
			return a, bad(KeyPrepareArgs, "uses "+endpointPlaceholder+", but the prepare hook runs before the job is deployed")
		}
	}
	if a.Setup, err = parseHook(meta, KeySetupArgs, KeySetupTimeout, DefaultSetupTimeout); err != nil {
		return a, fmt.Errorf("job %s: %w", a.Job, err)
	}
	if a.Verify, err = parseHook(meta, KeyVerifyArgs, KeyVerifyTimeout, DefaultVerifyTimeout); err != nil {
		return a, fmt.Errorf("job %s: %w", a.Job, err)
	}
	return a, nil
}

// requestPath reports whether p can follow the method on an HTTP request
// line as it is: anything else would make the load generator and the
// probe send a malformed request, or a second one smuggled into the first.
func requestPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] <= ' ' || p[i] == 0x7f {
			return false
		}
	}
	return true
}

// Measured reports whether the job holds the service load is aimed at.
func (a App) Measured() bool { return a.Service != "" }

// ScaledService is the service whose instances the variant and scale
// size: the one behind the measured entry, or the measured service itself.
func (a App) ScaledService() string {
	if a.Scaled != "" {
		return a.Scaled
	}
	return a.Service
}

// RequireProbe is the probe, or an error when the measured job has none:
// every measured app needs a correctness probe.
func (a App) RequireProbe() (Probe, error) {
	if a.Probe.Path == "" {
		return a.Probe, fmt.Errorf("job %s declares no %s in its job meta; every measured app needs a correctness probe", a.Job, KeyProbePath)
	}
	return a.Probe, nil
}

func parseHook(meta map[string]string, argsKey, timeoutKey string, def time.Duration) (Hook, error) {
	h := Hook{Timeout: def}
	if raw := strings.TrimSpace(meta[argsKey]); raw != "" {
		if err := json.Unmarshal([]byte(raw), &h.Args); err != nil {
			return h, fmt.Errorf("job meta %s %q is not a JSON list of strings: %w", argsKey, raw, err)
		}
		if len(h.Args) == 0 {
			return h, fmt.Errorf("job meta %s is an empty list", argsKey)
		}
	}
	if raw, ok := meta[timeoutKey]; ok && strings.TrimSpace(raw) != "" {
		d, err := time.ParseDuration(strings.TrimSpace(raw))
		if err != nil || d <= 0 {
			return h, fmt.Errorf("job meta %s = %q is not a positive duration (e.g. 10m)", timeoutKey, raw)
		}
		h.Timeout = d
	}
	return h, nil
}

// endpointPlaceholder is what Fill replaces.
const endpointPlaceholder = "{{endpoint}}"

// Fill returns the hook's arguments with "{{endpoint}}" replaced.
func (h Hook) Fill(endpoint string) []string {
	out := make([]string, len(h.Args))
	for i, a := range h.Args {
		out[i] = strings.ReplaceAll(a, endpointPlaceholder, endpoint)
	}
	return out
}

// CPUMode is how a task's CPU intent is enforced.
type CPUMode string

const (
	// CPUModeQuota: a CFS quota of the declared cores (docker with
	// cpu_hard_limit, a Swarm or Kubernetes CPU limit).
	CPUModeQuota CPUMode = "quota"
	// CPUModeShares: no cap; the reservation only weighs the task against others.
	CPUModeShares CPUMode = "shares"
	// CPUModeCPUSet: an exclusive cpuset of the declared whole cores (exec with cores).
	CPUModeCPUSet CPUMode = "cpuset"
	// CPUModeUnenforced: a cap is declared but the driver can only reserve
	// it (exec with fractional cores), so it cannot hold.
	CPUModeUnenforced CPUMode = "unenforced"
)

// Role is what a task is to the application, so figures per core can
// count the application's services apart from its datastores.
type Role string

const (
	// RoleService is a task of the application proper; a task that
	// declares no role is one.
	RoleService Role = "service"
	// RoleDatastore keeps the application's state (a database, a cache).
	RoleDatastore Role = "datastore"
)

// Task is what a pack intends to be enforced on one task.
type Task struct {
	// Cores is the CPU cap in cores; 0 means no cap was intended.
	Cores float64 `json:"cores"`
	// MemoryMiB is the hard memory limit; 0 means none.
	MemoryMiB int     `json:"memory_mib"`
	CPUMode   CPUMode `json:"cpu_mode,omitempty"`
	// WeightCores is what a shares-mode task weighs as against others, in
	// cores: its declared cores, or its reserved MHz over the node's MHz
	// per core (0 in other modes, or when neither is known).
	WeightCores float64 `json:"weight_cores,omitempty"`
	// Role is empty when the pack declares none (a service).
	Role Role `json:"role,omitempty"`
}

// WeighedCores is what the task's CPU weight stands for: its cap, or a
// shares-mode task's weight. Every orchestrator weighs a task in
// proportion to it, each in its own unit.
func (t Task) WeighedCores() float64 {
	if t.CPUMode == CPUModeShares {
		return t.WeightCores
	}
	return t.Cores
}

// Datastore reports whether the task keeps the application's state.
func (t Task) Datastore() bool { return t.Role == RoleDatastore }

// ParseTask reads a task's intent: the orchbench_ meta (task, then group,
// then job) when present, since the intent is what must hold; else what the
// Nomad resources imply, with mhzPerCore turning MHz into cores.
func ParseTask(job *api.Job, g *api.TaskGroup, t *api.Task, mhzPerCore float64) (Task, error) {
	where := func() string {
		return fmt.Sprintf("job %s, group %s, task %s", deref(job.ID), deref(g.Name), t.Name)
	}
	lookup := func(key string) (value, level string, ok bool) {
		for _, m := range []struct {
			level string
			meta  map[string]string
		}{{"task", t.Meta}, {"group", g.Meta}, {"job", job.Meta}} {
			if v, ok := m.meta[key]; ok {
				return v, m.level, true
			}
		}
		return "", "", false
	}
	var d Task
	if r := t.Resources; r != nil {
		// Nomad refuses these, but the intent is read before it sees them,
		// and a negative MHz or MiB would become a negative limit.
		for _, f := range []struct {
			name string
			v    *int
		}{{"cpu", r.CPU}, {"cores", r.Cores}, {"memory", r.MemoryMB}, {"memory_max", r.MemoryMaxMB}} {
			if f.v != nil && *f.v < 0 {
				return d, fmt.Errorf("%s: resources %s = %d is negative", where(), f.name, *f.v)
			}
		}
	}
	if v, level, ok := lookup(KeyCores); ok {
		c, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || c < 0 || math.IsInf(c, 0) || math.IsNaN(c) {
			return d, fmt.Errorf("%s: %s meta %s = %q is not a number of cores >= 0", where(), level, KeyCores, v)
		}
		d.Cores = c
	} else if t.Resources != nil {
		switch {
		case t.Resources.Cores != nil && *t.Resources.Cores > 0:
			d.Cores = float64(*t.Resources.Cores)
		case t.Resources.CPU != nil && mhzPerCore > 0:
			d.Cores = float64(*t.Resources.CPU) / mhzPerCore
		}
	}
	if v, level, ok := lookup(KeyMemoryMiB); ok {
		m, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || m < 0 {
			return d, fmt.Errorf("%s: %s meta %s = %q is not a whole number of MiB >= 0", where(), level, KeyMemoryMiB, v)
		}
		d.MemoryMiB = m
	} else if t.Resources != nil {
		// memory_max, when Nomad honours it, is the hard limit; memory only reserves
		if t.Resources.MemoryMaxMB != nil && *t.Resources.MemoryMaxMB > 0 {
			d.MemoryMiB = *t.Resources.MemoryMaxMB
		} else if t.Resources.MemoryMB != nil {
			d.MemoryMiB = *t.Resources.MemoryMB
		}
	}
	if v, level, ok := lookup(KeyCPUMode); ok {
		switch m := CPUMode(v); m {
		case CPUModeQuota, CPUModeShares, CPUModeCPUSet, CPUModeUnenforced:
			d.CPUMode = m
		default:
			return d, fmt.Errorf("%s: %s meta %s = %q is not a CPU mode (valid: quota, shares, cpuset, unenforced)", where(), level, KeyCPUMode, v)
		}
	} else {
		d.CPUMode = inferCPUMode(t, d.Cores)
	}
	if d.CPUMode == CPUModeShares {
		d.WeightCores = d.Cores
		// a pack that declares no cores still weighs the task by its MHz, as Nomad does
		if r := t.Resources; d.WeightCores == 0 && r != nil && r.CPU != nil && *r.CPU > 0 && mhzPerCore > 0 {
			d.WeightCores = float64(*r.CPU) / mhzPerCore
		}
	}
	if v, level, ok := lookup(KeyRole); ok {
		switch r := Role(v); r {
		case RoleService, RoleDatastore:
			d.Role = r
		default:
			return d, fmt.Errorf("%s: %s meta %s = %q is not a role (valid: service, datastore)", where(), level, KeyRole, v)
		}
	}
	return d, nil
}

// inferCPUMode is how Nomad 1.10 enforces a task's CPU when the pack does
// not say: reserved cores are a cpuset, docker turns MHz into a quota (only
// with cpu_hard_limit, which the gate then verifies), and other drivers only
// reserve MHz.
func inferCPUMode(t *api.Task, cores float64) CPUMode {
	switch {
	case t.Resources != nil && t.Resources.Cores != nil && *t.Resources.Cores > 0:
		return CPUModeCPUSet
	case cores == 0:
		return CPUModeShares
	case t.Driver == "docker":
		return CPUModeQuota
	default:
		return CPUModeUnenforced
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
