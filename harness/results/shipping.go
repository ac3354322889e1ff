package results

import (
	"encoding/json"
	"fmt"
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
	// Processes are agent binaries found on the node during the load (any,
	// whoever started them): with shipping off there must be none.
	Processes []string `json:"processes,omitempty"`
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
	raw, ok := r.Metadata["shipping"]
	if !ok {
		return Shipping{}, false
	}
	if s, ok := raw.(Shipping); ok {
		return s, true
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return Shipping{}, false
	}
	var s Shipping
	if json.Unmarshal(b, &s) != nil {
		return Shipping{}, false
	}
	return s, true
}
