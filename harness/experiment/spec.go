// Package experiment reads a sweep specification (HCL) and expands it into a
// plan: the ordered list of steps, one per app × orchestrator × variant ×
// load level × repetition. Everything that can be checked without touching a
// cluster is checked while parsing, so that a typo fails in a second instead
// of after an hour of deployments.
package experiment

import (
	"encoding/json"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"strconv"
	"time"
)

// Deploy policies: how often the app is (re)deployed during a sweep.
const (
	// DeployPerConfiguration deploys once per app × orchestrator × variant and
	// runs all its rates and repetitions against that deployment.
	DeployPerConfiguration = "per-configuration"
	// DeployPerStep deploys afresh before every step, so no step inherits
	// warm caches or leaked state from the previous one.
	DeployPerStep = "per-step"
)

// Load kinds.
const (
	// LoadOpen is wrk2-style constant throughput: requests are issued on a
	// schedule whatever the response times, and latency is corrected for
	// coordinated omission.
	LoadOpen = "open"
	// LoadClosed is a fixed population of users that each wait for a
	// response (and think) before the next request.
	LoadClosed = "closed"
	// LoadIterations is JMeter's thread group: a fixed number of users
	// (threads) each run a request sequence a fixed number of times (loops)
	// with no pause; the step ends when every user has finished, bounded by
	// the sweep's duration.
	LoadIterations = "iterations"
)

// Load runners: the tool that generates a step's load. Ours is the default;
// the others are the studies' own tools, run the same way (a one-shot job
// with the same limits) and parsed into the same result.
const (
	RunnerOrchbench = "orchbench"
	RunnerFortio    = "fortio"
	RunnerLocust    = "locust"
	RunnerArtillery = "artillery"
	RunnerJMeter    = "jmeter"
)

// Runners are the load runners a spec may name.
var Runners = []string{RunnerOrchbench, RunnerFortio, RunnerLocust, RunnerJMeter, RunnerArtillery}

// Shipping modes: whether the node agent ships logs and metrics while a
// step's load runs. "off" stops it for the app's steps (what the step's
// services log is shipped afterwards, when it runs again), so a step can be
// measured without the agent's CPU on the node.
const (
	ShippingOn  = "on"
	ShippingOff = "off"
)

// ShippingModes are the values a spec's shipping may take.
var ShippingModes = []string{ShippingOn, ShippingOff}

// Studies are the published studies (../shared/STUDIES.md numbering) whose
// headline tables the report regenerates: 000, VMs against containers with
// four small HTTP apps; 001, a Django voting app's storage modes; 003, a
// Node web tier's routes (remote, function pool, cache); 004, Node/Express
// against Kotlin/Spring on Postgres. harness/studies has a table for each.
var Studies = []string{"000", "001", "003", "004"}

// Sweep is one parsed and validated sweep block.
type Sweep struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Study names the published study whose headline table the report
	// regenerates from this sweep's steps (one of Studies); empty for none.
	Study string `json:"study,omitempty"`
	// File is the spec's path as given to ParseFile, for messages.
	File string `json:"file"`
	// Source is the spec text verbatim, archived so a sweep can be rerun
	// exactly even after the file changed.
	Source string `json:"source"`
	// Seed drives the step order. SeedGenerated is true when the spec had
	// none and one was drawn from the clock; it is recorded either way.
	Seed          uint64        `json:"seed"`
	SeedGenerated bool          `json:"seed_generated,omitempty"`
	Repetitions   int           `json:"repetitions"`
	Deploy        string        `json:"deploy"`
	Warmup        time.Duration `json:"warmup_ns"`
	Duration      time.Duration `json:"duration_ns"`
	Cooldown      time.Duration `json:"cooldown_ns"`
	EarlyStop     bool          `json:"early_stop"`
	Orchestrators []string      `json:"orchestrators"`
	Apps          []App         `json:"apps"`
	SLO           SLO           `json:"slo"`

	// HA is the cluster shape every step needs (HAOn, HAOff); empty takes
	// whatever runs. The sweep checks it against the running cluster.
	HA string `json:"ha,omitempty"`
	// HAAt is where HA is set ("file.hcl:12"), so a refusal names the line.
	HAAt string `json:"ha_at,omitempty"`
}

// App is one app block: which pack, which variants and which load levels.
type App struct {
	Name     string   `json:"name"`
	Pack     string   `json:"pack"`
	Variants []string `json:"variants"`
	// Vars are pack variables for every variant; VariantVars override them
	// per variant. Values are string, float64, bool, []any or map[string]any.
	Vars        map[string]any            `json:"vars,omitempty"`
	VariantVars map[string]map[string]any `json:"variant_vars,omitempty"`
	// Rates are the offered request rates (requests/s), ascending, for open
	// loop; Users the user populations for closed loop. Exactly one is set.
	Rates []float64 `json:"rates,omitempty"`
	Users []int     `json:"users,omitempty"`
	Load  Load      `json:"load"`
	// Probe replaces the correctness probe the pack declares, when set.
	Probe *Probe `json:"probe,omitempty"`
	// Fault is injected into every step of this app during load (HA runs).
	Fault *Fault `json:"fault,omitempty"`
	// Shipping is ShippingOn or ShippingOff; empty means on.
	Shipping string `json:"shipping,omitempty"`
	// HA overrides the sweep's shape for this app's steps, so one spec can
	// hold both shapes (run once on each; docs/faults.md); HAAt is its line.
	HA   string `json:"ha,omitempty"`
	HAAt string `json:"ha_at,omitempty"`
	// Autoscale makes every step of the app a scaling step (autoscale.go).
	Autoscale *Autoscale `json:"autoscale,omitempty"`
}

// Fault is something done to one instance while load runs, to measure how
// the deployment rides it out.
type Fault struct {
	// Kind is "kill-task" (SIGKILL one instance's tasks; the orchestrator
	// restarts or replaces them) or "replace-instance" (remove one
	// instance; the orchestrator schedules a new one; formerly "stop-alloc").
	Kind orchestrator.FaultKind `json:"kind"`
	// Service is the service whose instance is hit; empty means the
	// measured service.
	Service string `json:"service,omitempty"`
	// After is the time into the measured period (after warm-up).
	After time.Duration `json:"after_ns"`
	// Node names the node a node-level kind acts on; empty means the worker
	// that runs an instance of Service (kill-node, partition-node,
	// restart-agent; kill-leader's node is the leader's).
	Node string `json:"node,omitempty"`
	// Agent is the agent restart-agent restarts (consul, nomad, kubelet).
	Agent string `json:"agent,omitempty"`
	// Duration is how long partition-node cuts the node off (required),
	// or how long kill-node and kill-leader keep it down before it is
	// started again (empty: until the step ends).
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// HA values: the control plane's shape a sweep runs on, 3 servers (Nomad
// and Consul raft peers, Swarm managers) or 1.
const (
	HAOn  = "on"
	HAOff = "off"
)

// HAServers is the number of servers each shape has.
var HAServers = map[string]int{HAOn: 3, HAOff: 1}

// Probe is a correctness check run on every instance before load: a request
// whose answer proves the app serves real data.
type Probe struct {
	Path     string `json:"path"`
	Status   int    `json:"status"`
	MinBytes int    `json:"min_bytes,omitempty"`
	Regex    string `json:"regex,omitempty"`
}

// Load is how the load generator drives one step.
type Load struct {
	Kind        string `json:"kind"` // LoadOpen or LoadClosed
	Threads     int    `json:"threads"`
	Connections int    `json:"connections"`
	// Distribution of inter-arrival times for open loop: "fixed" or "exp".
	Distribution string `json:"distribution,omitempty"`
	// Path is the request path; empty means the pack's orchbench_load_path meta.
	Path string `json:"path,omitempty"`
	// Workload names a built-in Go workload; Script is a wrk Lua script path.
	Workload string `json:"workload,omitempty"`
	Script   string `json:"script,omitempty"`
	// Think is the closed-loop pause between a response and the next request.
	Think time.Duration `json:"think_ns,omitempty"`
	// SpawnRate starts a closed loop's users at this many a second (0: all
	// at once), as Locust's --spawn-rate.
	SpawnRate float64 `json:"spawn_rate,omitempty"`
	// Locustfile is a locustfile of the spec's (runner "locust"), run
	// instead of the generated one: a study's own user flow.
	Locustfile string `json:"locustfile,omitempty"`
	// Engine is the generator's engine, open or closed loop (auto, loop,
	// goroutine); empty means auto.
	Engine string `json:"engine,omitempty"`
	// GeneratorCores caps the load generator's CPU (0: no cap, a
	// reservation only), so its cost is declared like the app's.
	GeneratorCores float64 `json:"generator_cores,omitempty"`
	// Runner is the load tool (Runners); empty means ours.
	Runner string `json:"runner,omitempty"`
	// Timeout is the per-request timeout, counted as an error; 0 means the
	// generator's default (2 s).
	Timeout time.Duration `json:"timeout_ns,omitempty"`
	// Iterations is set for LoadIterations: the loops and the sequence.
	Iterations *Iterations `json:"iterations,omitempty"`
	// Phases, in open loop, shape every step's arrivals as multiples of
	// its rate (phases.go); none is one flat phase at the rate.
	Phases []Phase `json:"phases,omitempty"`
	// MaxGeneratorLag bounds the generator's own send delay (p99); past it
	// the step is invalid. 0 means the harness default: 5 ms, or a tenth of
	// the SLO's p99 when that is smaller.
	MaxGeneratorLag time.Duration `json:"max_generator_lag_ns,omitempty"`
}

// Iterations is a JMeter-style thread group: every user (one connection)
// runs Requests in order, Loops times.
type Iterations struct {
	Loops int `json:"loops"`
	// MaxDuration bounds the step; 0 means the sweep's duration.
	MaxDuration time.Duration `json:"max_duration_ns,omitempty"`
	Requests    []Request     `json:"requests"`
}

// PerUser is the number of requests every user sends.
func (it Iterations) PerUser() int { return it.Loops * len(it.Requests) }

// Request is one request of an iteration's sequence.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   string `json:"body,omitempty"`
	// ContentType is sent with a body; default application/json.
	ContentType string `json:"content_type,omitempty"`
}

// RunnerName is the runner, "orchbench" when none was named.
func (l Load) RunnerName() string {
	if l.Runner == "" {
		return RunnerOrchbench
	}
	return l.Runner
}

// SLO decides when a step (and so a configuration at that load) is broken.
type SLO struct {
	// P99Ms is the corrected p99 latency limit in milliseconds; 0 disables it.
	P99Ms float64 `json:"p99_ms"`
	// MinAchievedRatio is the least achieved/offered throughput accepted.
	MinAchievedRatio float64 `json:"min_achieved_ratio"`
	// MaxErrorRatio is the largest errors/requests accepted.
	MaxErrorRatio float64 `json:"max_error_ratio"`
}

// Step is one run of the matrix: deploy (if Redeploy), verify, load, store.
type Step struct {
	// Index is the position in execution order, from 0.
	Index        int    `json:"index"`
	ID           string `json:"id"`
	App          string `json:"app"`
	Pack         string `json:"pack"`
	Orchestrator string `json:"orchestrator"`
	Variant      string `json:"variant"`
	// OfferedRPS is the open-loop rate; 0 for closed loop.
	OfferedRPS float64 `json:"offered_rps"`
	// Users is the closed-loop population; 0 for open loop.
	Users int `json:"users,omitempty"`
	// Rep counts repetitions from 1.
	Rep int `json:"rep"`
	// Vars are the pack variables to render with, including "variant".
	Vars  map[string]any `json:"vars"`
	Load  Load           `json:"load"`
	Probe *Probe         `json:"probe,omitempty"`
	Fault *Fault         `json:"fault,omitempty"`
	// Autoscale is set on a scaling step: its policy and settle time.
	Autoscale *Autoscale `json:"autoscale,omitempty"`
	// HA is the step's cluster shape (HAOn, HAOff): its app's, else the
	// sweep's; empty for any. HAAt is the spec line that sets it.
	HA   string `json:"ha,omitempty"`
	HAAt string `json:"ha_at,omitempty"`
	// Shipping is the app's shipping mode; empty means on.
	Shipping string        `json:"shipping,omitempty"`
	Warmup   time.Duration `json:"warmup_ns"`
	Duration time.Duration `json:"duration_ns"`
	Cooldown time.Duration `json:"cooldown_ns"`
	// Redeploy is true when this step must deploy before loading: always
	// with DeployPerStep, on the first step of each configuration otherwise.
	Redeploy bool `json:"redeploy"`
}

// Configuration names the app × orchestrator × variant the step belongs to;
// steps of one configuration share a deployment and a breaking point.
func (s Step) Configuration() string {
	return s.App + "-" + s.Orchestrator + "-" + s.Variant
}

// ShippingOff says the node agent must not run during the step's load.
func (s Step) ShippingOff() bool { return s.Shipping == ShippingOff }

// Level is the load level label: "r400" (requests/s) or "u16" (users).
func (s Step) Level() string { return levelLabel(s.OfferedRPS, s.Users) }

func levelLabel(rate float64, users int) string {
	if users > 0 {
		return "u" + strconv.Itoa(users)
	}
	return "r" + FormatRate(rate)
}

// FormatRate prints a rate without a trailing ".0" so IDs stay short.
func FormatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// VarText writes a spec's pack variable value the way --var takes it (HCL
// accepts JSON lists and objects): what the sweep passes to the renderer
// and what a report groups configurations by.
func VarText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return FormatRate(x)
	case bool:
		return strconv.FormatBool(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// StepID is the stable identity of a step, e.g. taewa-nomad-vertical-r400-rep1.
// It does not depend on the seed, so a resumed sweep finds its steps again.
func StepID(app, orchestrator, variant string, rate float64, users, rep int) string {
	return app + "-" + orchestrator + "-" + variant + "-" + levelLabel(rate, users) + "-rep" + strconv.Itoa(rep)
}
