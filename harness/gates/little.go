package gates

import (
	"fmt"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

// LittleCheck is what the little gate judges: each connection has one
// request outstanding, so it carries at most 1/latency requests a second
// (Little's law). Past that, requests wait for a free connection, and the
// corrected latency grows from the generator's own head-of-line waiting,
// not the application's. The expected latency is the slowest probe answer
// before load.
type LittleCheck struct {
	Connections int     `json:"connections"`
	OfferedRPS  float64 `json:"offered_rps"`
	ProbeMs     float64 `json:"probe_ms"`
	// CapacityRPS is what the connections carry at ProbeMs.
	CapacityRPS float64 `json:"capacity_rps"`
	Warning     string  `json:"warning,omitempty"`
}

// LittleCheckOf is the check of an open loop offering offered rps over
// connections whose unloaded answer took probe; with any of them unknown
// it holds no capacity, and the gate says so.
func LittleCheckOf(connections int, offered float64, probe time.Duration) LittleCheck {
	c := LittleCheck{Connections: connections, OfferedRPS: offered, ProbeMs: probe.Seconds() * 1000}
	if offered <= 0 || connections <= 0 || probe <= 0 {
		return c
	}
	c.CapacityRPS = float64(connections) / probe.Seconds()
	if c.CapacityRPS < offered {
		c.Warning = fmt.Sprintf("%d connections at the unloaded latency of %.1f ms carry at most %.0f rps, less than the %.0f offered: latency would grow from waiting for a free connection, not from the application; raise connections",
			connections, c.ProbeMs, c.CapacityRPS, offered)
	}
	return c
}

// LittleGate makes an open-loop step invalid when its connections cannot
// carry the offered rate even at the unloaded latency: such a step measures
// the generator's queue, and calling it broken would blame the application.
//
// The latency is one probe answer per instance, so the bound has no
// headroom on purpose: under load latency only grows, and a margin on a
// single sample (the capacity at twice the probe latency, say) would refuse
// modest steps that a noisy answer made look slow. What fails here is
// certain to queue at the generator; what passes may still come close,
// and the generator gate's send lag shows that.
func LittleGate(c LittleCheck) results.Gate {
	g := results.Gate{Name: Little}
	switch {
	case c.OfferedRPS <= 0 || c.Connections <= 0:
		g.NotChecked, g.Detail = true, "no offered rate over connections to judge"
	case c.ProbeMs <= 0:
		g.NotChecked, g.Detail = true, "the probe measured no unloaded latency to judge the connections by"
	case c.CapacityRPS < c.OfferedRPS:
		g.Detail = c.Warning
	default:
		g.Passed = true
		g.Detail = fmt.Sprintf("%d connections at the unloaded latency of %.1f ms carry up to %.0f rps, at least the %.0f offered",
			c.Connections, c.ProbeMs, c.CapacityRPS, c.OfferedRPS)
	}
	return g
}

// ClosedLittleGate is the little gate of a closed loop (iterations too),
// where it does not apply.
func ClosedLittleGate(users int) results.Gate {
	return results.Gate{Name: Little, NotChecked: true,
		Detail: fmt.Sprintf("closed loop: each of the %d users waits for its answer before sending again, so no request waits for a free connection", users)}
}

// ConnectionPerArrivalLittleGate stands for LittleGate with a tool that
// opens a connection for every arrival (Artillery's virtual users): no
// request ever waits for a free one, so the connections set no ceiling.
func ConnectionPerArrivalLittleGate(tool string) results.Gate {
	return results.Gate{Name: Little, NotChecked: true,
		Detail: fmt.Sprintf("%s opens a connection for every arrival, so no request waits for a free one", tool)}
}
