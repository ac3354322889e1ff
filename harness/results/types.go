// Package results stores what a sweep measured (an archive of JSON files on
// disk), pushes it to VictoriaMetrics, and derives statistics and breaking
// points from it. The archive is the source of truth: everything else —
// metrics, tables, reports — is recomputed from it.
package results

import (
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// Labels identify a step; they become the labels of every metric it pushes.
type Labels struct {
	Sweep        string  `json:"sweep"`
	Step         string  `json:"step"`
	App          string  `json:"app"`
	Orchestrator string  `json:"orchestrator"`
	Variant      string  `json:"variant"`
	OfferedRPS   float64 `json:"offered_rps"`
	// Users is the closed-loop population, 0 for open loop.
	Users int `json:"users,omitempty"`
	Rep   int `json:"rep"`
}

// LabelsFor fills the labels of a planned step.
func LabelsFor(sweepID string, s experiment.Step) Labels {
	return Labels{
		Sweep: sweepID, Step: s.ID, App: s.App, Orchestrator: s.Orchestrator,
		Variant: s.Variant, OfferedRPS: s.OfferedRPS, Users: s.Users, Rep: s.Rep,
	}
}

// Configuration is app-orchestrator-variant, as experiment.Step.Configuration.
func (l Labels) Configuration() string { return l.App + "-" + l.Orchestrator + "-" + l.Variant }

// Gate is one check of a step (healthy, limits, probe, slo...).
type Gate struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail,omitempty"`
	// Breaks marks a check of the application under load (SLO, shrinking
	// responses): its failure is a measurement, so the step is broken,
	// not invalid.
	Breaks bool `json:"breaks,omitempty"`
	// NotChecked marks a check that could not apply to this step; Detail
	// says why. It neither passes nor fails the step.
	NotChecked bool `json:"not_checked,omitempty"`
}

// GateEarlyStop is the only gate of a step skipped above the level at which
// its repetition broke.
const GateEarlyStop = "early-stop"

// Latency summarises one latency distribution, in milliseconds.
type Latency struct {
	P50  float64 `json:"p50_ms"`
	P75  float64 `json:"p75_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p999_ms"`
	Max  float64 `json:"max_ms"`
	Mean float64 `json:"mean_ms"`
}

// SpectrumPoint is one point of a percentile spectrum (as wrk2 and
// HdrHistogram print it). Percentile is in percent, 0–100.
type SpectrumPoint struct {
	Percentile float64 `json:"percentile"`
	ValueMs    float64 `json:"value_ms"`
}

// EndpointStats are the figures of one endpoint (request name or path).
type EndpointStats struct {
	Name     string `json:"name"`
	Requests int64  `json:"requests"`
	Errors   int64  `json:"errors"`
	Bytes    int64  `json:"bytes"`
	// Completed counts answers with a status below 400, BodyBytes their
	// body bytes (headers excluded): what the responses gate and the
	// orchestrator parity compare.
	Completed int64 `json:"completed,omitempty"`
	BodyBytes int64 `json:"body_bytes,omitempty"`
	// BodySquares sums the squared body sizes, when the generator counted
	// them: the spread the responses gate allows for
	BodySquares float64 `json:"body_squares,omitempty"`
	Latency     Latency `json:"latency"`
}

// Second is one interval (normally a second) of the measurement window; T
// is its start in seconds from Start. Warm-up intervals are not stored.
type Second struct {
	T        float64 `json:"t"`
	Offered  float64 `json:"offered"`
	Achieved float64 `json:"achieved"`
	Errors   int64   `json:"errors"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
}

// Accounting is the generator's: every request due in the measured window
// in exactly one bucket, Due = Completed + Errors + Timeouts + Unsent. The
// archive keeps it as the generator reported it.
type Accounting = loadgen.Accounting

// StepResult is a step's summary.json: everything measured and checked.
type StepResult struct {
	Labels
	// Outcome is valid, broken or invalid, with the failed checks as
	// Reasons; see Outcome. Invalid steps are archived but left out of
	// statistics, and run again by a resumed sweep.
	Outcome Outcome  `json:"outcome"`
	Reasons []string `json:"reasons,omitempty"`
	// Skipped steps were not run because the same repetition broke at a
	// lower level (early stop); they count as broken at their level.
	Skipped bool   `json:"skipped,omitempty"`
	Gates   []Gate `json:"gates"`

	AchievedRPS float64 `json:"achieved_rps"`
	// DueRPS is the rate of requests actually scheduled in the window (random
	// around the offered rate with exp arrivals); 0 when unknown.
	DueRPS float64 `json:"due_rps,omitempty"`
	// Requests counts the requests sent (answered, failed or timed out);
	// Errors the failed ones (4xx/5xx, socket errors, timeouts).
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	Bytes    int64 `json:"bytes"`

	// ServiceCores is the CPU the measured service's instances used over
	// the measured period (cores, from their cgroups), and QPSPerCore is
	// AchievedRPS over it: study 000's "weighted qps" (qps ÷ CPU %), per
	// core actually used rather than per core allowed. 0 when unknown.
	ServiceCores float64 `json:"service_cores,omitempty"`
	QPSPerCore   float64 `json:"qps_per_core,omitempty"`
	// AppCores is the CPU every task of the application's deployment used
	// over the measured period (the load generator is not one), its
	// datastores' share in DatastoreCores, and QPSPerAppCore is
	// AchievedRPS over AppCores: the figure per core of an application of
	// many services, where the measured one (a front end) uses little.
	// A ratio is recorded only over at least MinRatioCores.
	AppCores       float64 `json:"app_cores,omitempty"`
	DatastoreCores float64 `json:"datastore_cores,omitempty"`
	QPSPerAppCore  float64 `json:"qps_per_app_core,omitempty"`

	// Corrected latency accounts for coordinated omission (measured from
	// the intended send time); Uncorrected from the actual send time.
	Corrected           Latency         `json:"corrected"`
	Uncorrected         Latency         `json:"uncorrected"`
	Spectrum            []SpectrumPoint `json:"spectrum,omitempty"`
	UncorrectedSpectrum []SpectrumPoint `json:"uncorrected_spectrum,omitempty"`

	// Accounting says where every request due in the window ended up.
	Accounting *Accounting `json:"accounting,omitempty"`

	Endpoints    []EndpointStats  `json:"endpoints,omitempty"`
	StatusCodes  map[string]int64 `json:"status_codes,omitempty"`
	ErrorClasses map[string]int64 `json:"error_classes,omitempty"`
	Series       []Second         `json:"series,omitempty"`
	// Scaling is a scaling step's record of its autoscaler.
	Scaling *ScalingRecord `json:"scaling,omitempty"`

	// Metadata: git SHA, tool versions, image IDs, placements, enforced
	// limits, node attributes, resource_scale — whatever the runner records.
	Metadata map[string]any `json:"metadata,omitempty"`

	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// ErrorRatio is Errors/Requests, 0 when nothing was sent.
func (r StepResult) ErrorRatio() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Errors) / float64(r.Requests)
}

// FailedGates lists the gates that failed, as "name: detail".
func (r StepResult) FailedGates() []string {
	var out []string
	for _, g := range r.Gates {
		if !g.Passed && !g.NotChecked {
			s := g.Name
			if g.Detail != "" {
				s += ": " + g.Detail
			}
			out = append(out, s)
		}
	}
	return out
}

// SweepRecord is sweep.json: what was planned and with which tools.
type SweepRecord struct {
	ID     string            `json:"id"`
	Spec   *experiment.Sweep `json:"spec"`
	Seed   uint64            `json:"seed"`
	Plan   []experiment.Step `json:"plan"`
	GitSHA string            `json:"git_sha,omitempty"`
	// ToolVersions maps a tool (nomad, docker, orchbench, go...) to its version.
	ToolVersions map[string]string `json:"tool_versions,omitempty"`
	Start        time.Time         `json:"start"`
}
