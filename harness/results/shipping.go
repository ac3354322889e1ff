package results

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Shipping is what the node agent (the log and metrics shipper) did during a
// step's measured period: whether it was meant to run, and what it cost the
// node. The agent shares the node with the measured services, so its CPU is
// part of what a step measured.
type Shipping struct {
	// Mode is the step's declared shipping, "on" or "off".
	Mode string `json:"mode"`
	// Undeclared marks a step whose spec set no shipping, run on a cluster
	// without a node agent: nothing was expected, so nothing is checked.
	Undeclared bool `json:"undeclared,omitempty"`
	// Agent names the agent's job (empty when none ran).
	Agent string `json:"agent,omitempty"`
	// Cores is the CPU all the agent's tasks used over the window.
	Cores float64 `json:"cores"`
	// ResidentBytes is the agent's anonymous memory at the window's end.
	ResidentBytes int64 `json:"resident_bytes"`
	// Tasks are the agent's tasks, one per node it ran on here.
	Tasks []TaskCPU `json:"tasks,omitempty"`
	// LogsURL is the VictoriaLogs the agent shipped to, and Jobs the step's
	// Nomad jobs whose task logs it holds: what a step's log link queries.
	LogsURL string   `json:"logs_url,omitempty"`
	Jobs    []string `json:"jobs,omitempty"`
	// Processes are agent binaries found on the node during the load (any,
	// whoever started them): with shipping off there must be none.
	Processes []string `json:"processes,omitempty"`
	// ProcessLooks counts the looks at the node's processes over the load
	// (one a second), and ProcessError says why one failed: a shipper that
	// ran between two looks a second apart is all that can escape.
	ProcessLooks int    `json:"process_looks,omitempty"`
	ProcessError string `json:"process_error,omitempty"`
}

func (s Shipping) String() string {
	if s.Mode == "off" {
		return "shipping off: no agent ran"
	}
	return fmt.Sprintf("shipping on: agent %.3f cores, %.0f MiB resident", s.Cores, float64(s.ResidentBytes)/(1<<20))
}

// ShippingOf returns the step's shipping record, whether the step was made in
// this process or read back from the archive; false for a step without one
// (measured before shipping existed, or on no node with an agent).
func ShippingOf(r StepResult) (Shipping, bool) {
	if s, ok := r.Metadata["shipping"].(Shipping); ok {
		return s, true
	}
	var s Shipping
	return s, decodeMeta(r.Metadata["shipping"], &s)
}

// LogsQuery is the LogsQL query for the task logs of jobs over [from, to].
func LogsQuery(jobs []string, from, to time.Time) string {
	quoted := make([]string, len(jobs))
	for i, j := range jobs {
		quoted[i] = strconv.Quote(j)
	}
	return fmt.Sprintf("_time:[%s, %s] nomad.job:in(%s)", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), strings.Join(quoted, ", "))
}

// StepLogs returns the links to a step's task logs in VictoriaLogs: its web
// UI over the step's time range, and the LogsQL API answering JSON lines.
// ok is false when the step's logs were not shipped anywhere known.
func StepLogs(r StepResult) (ui, api string, ok bool) {
	s, found := ShippingOf(r)
	if !found || s.LogsURL == "" || len(s.Jobs) == 0 || r.Start.IsZero() || r.End.IsZero() {
		return "", "", false
	}
	base := strings.TrimRight(s.LogsURL, "/")
	q := LogsQuery(s.Jobs, r.Start, r.End)
	span := r.End.Sub(r.Start).Round(time.Second) + time.Minute
	ui = base + "/select/vmui/#/?" + url.Values{
		"query":            {q},
		"g0.range_input":   {span.String()},
		"g0.end_input":     {r.End.Add(30 * time.Second).UTC().Format("2006-01-02T15:04:05")},
		"g0.relative_time": {"none"},
	}.Encode()
	api = base + "/select/logsql/query?" + url.Values{"query": {q}}.Encode()
	return ui, api, true
}
