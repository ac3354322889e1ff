package sweep

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/sockets"
)

// The checks of a step's load run. Each one can fail, and each names what
// it saw; tests in loadgates_test.go make every one of them fail.

// DefaultMaxGeneratorLag bounds the generator's own send delay (p99): past
// it the generator, not the application, set the pace.
const DefaultMaxGeneratorLag = 5 * time.Millisecond

// minLagSamples is the fewest sends whose p99 is more than their maximum:
// below it one scheduling hiccup would decide the step.
const minLagSamples = 100

// CompleteGate accepts a load run only when the generator ran its whole
// schedule: it exited cleanly, was not interrupted, accounted for every
// request due, and measured for the planned duration.
func CompleteGate(res *loadgen.Result, runErr error, planned time.Duration, runner string) results.Gate {
	g := results.Gate{Name: GateLoad}
	switch {
	case runErr != nil:
		g.Detail = runErr.Error()
	case res == nil:
		g.Detail = "the load generator left no result"
	case res.Interrupted:
		g.Detail = fmt.Sprintf("the load generator was interrupted after %.1f s of %.1f s", res.WallSeconds, planned.Seconds())
	case res.DurationSeconds+0.001 < planned.Seconds():
		g.Detail = fmt.Sprintf("measured %.1f s of the planned %.1f s", res.DurationSeconds, planned.Seconds())
	case res.WallSeconds+0.001 < res.DurationSeconds:
		g.Detail = fmt.Sprintf("the generator ran %.1f s, shorter than its %.1f s window", res.WallSeconds, res.DurationSeconds)
	case !res.Accounting.Balanced():
		g.Detail = "requests unaccounted for: " + res.Accounting.String()
	default:
		g.Passed = true
		g.Detail = fmt.Sprintf("%.1f s by the %s load runner; %s", res.WallSeconds, runner, res.Accounting)
	}
	return g
}

// LagBound is the open-loop generator's send-lag bound (p99) and where it
// came from, for the gate's detail.
type LagBound struct {
	Max    time.Duration
	Source string
}

// sloLagShare is the share of the SLO's p99 the generator's own lag may
// take: a lag near the SLO would decide a step at the SLO's edge.
const sloLagShare = 0.10

// generatorLagBound is the spec's max_generator_lag when it sets one, else
// the smaller of DefaultMaxGeneratorLag and a tenth of the SLO's p99.
func generatorLagBound(declared time.Duration, slo experiment.SLO) LagBound {
	if declared > 0 {
		return LagBound{Max: declared, Source: "max_generator_lag in the spec"}
	}
	if slo.P99Ms <= 0 {
		return LagBound{Max: DefaultMaxGeneratorLag, Source: "the default; the SLO has no p99 rule"}
	}
	share := time.Duration(sloLagShare * slo.P99Ms * float64(time.Millisecond))
	if share < DefaultMaxGeneratorLag {
		return LagBound{Max: share, Source: fmt.Sprintf("%.0f %% of the SLO's p99 of %g ms", 100*sloLagShare, slo.P99Ms)}
	}
	return LagBound{Max: DefaultMaxGeneratorLag, Source: fmt.Sprintf("the default, under %.0f %% of the SLO's p99 of %g ms", 100*sloLagShare, slo.P99Ms)}
}

// GeneratorGate marks a step invalid when the generator was too busy to
// send on time: then its own queue, not the application, shaped the
// latency. wrk2 cannot tell this apart; the lag measurement can.
func GeneratorGate(res *loadgen.Result, bound LagBound) results.Gate {
	g := results.Gate{Name: GateGenerator}
	gen := res.Generator
	if gen.LagSamples < minLagSamples {
		g.NotChecked = true
		g.Detail = fmt.Sprintf("%d sends in the measured window, fewer than the %d a p99 of the send lag needs (max %s)",
			gen.LagSamples, minLagSamples, time.Duration(gen.LagMaxUs)*time.Microsecond)
		return g
	}
	p99 := time.Duration(gen.LagP99Us) * time.Microsecond
	desc := fmt.Sprintf("send lag p99 %s, max %s over %d sends; %.2f cores", p99, time.Duration(gen.LagMaxUs)*time.Microsecond, gen.LagSamples, gen.CPUCores)
	limit := fmt.Sprintf("bound %s: %s", bound.Max, bound.Source)
	if p99 > bound.Max {
		g.Detail = fmt.Sprintf("generator saturated: %s (%s)", desc, limit)
		return g
	}
	g.Passed = true
	g.Detail = fmt.Sprintf("%s (%s)", desc, limit)
	return g
}

// LoadPathGate checks, from the generator's own sockets, that every
// connection went to a registered instance of the measured service, and,
// for the ones on this machine's loopback, that what accepts them is the
// instance itself: a process of an instance's cgroup, or no process here
// (the kernel carries the connection into the instance's namespace, as a
// NAT rule does). A process outside every instance (docker's userland
// proxy, an SSH tunnel, a forwarder) accepting at the registered address
// relays the load, and the step did not measure what it declared.
// instanceCgroups are the CPU cgroups of the deployment's instances.
func LoadPathGate(peers []loadgen.Peer, eps []orchestrator.Endpoint, instanceCgroups map[string]bool) results.Gate {
	g := results.Gate{Name: GateLoadPath}
	if len(peers) == 0 {
		g.NotChecked = true
		g.Detail = "no connection was established, so the path could not be seen"
		return g
	}
	registered := map[string]string{}
	inside := map[string]netns.Path{}
	for _, ep := range eps {
		registered[ep.HostPort()] = ep.Service
		inside[ep.HostPort()] = ep.NetNS
	}
	var direct, stray, relayed, unchecked []string
	for _, p := range peers {
		svc, ok := registered[p.Addr]
		if !ok {
			stray = append(stray, fmt.Sprintf("%s (%d connections)", p.Addr, p.Connections))
			continue
		}
		problem, note := relay(inside[p.Addr], p.Addr, instanceCgroups)
		if problem != "" {
			relayed = append(relayed, problem)
			continue
		}
		if note != "" {
			unchecked = append(unchecked, note)
		}
		direct = append(direct, fmt.Sprintf("%s (%s, %d connections)", p.Addr, svc, p.Connections))
	}
	switch {
	case len(stray) > 0:
		known := make([]string, 0, len(registered))
		for addr := range registered {
			known = append(known, addr)
		}
		sort.Strings(known)
		g.Detail = fmt.Sprintf("connections reached %s, which is not a registered instance (registered: %s): a proxy or tunnel in the path?",
			strings.Join(stray, ", "), strings.Join(known, ", "))
	case len(relayed) > 0:
		g.Detail = strings.Join(relayed, "; ")
	default:
		g.Passed = true
		g.Detail = "every connection went straight to an instance: " + strings.Join(direct, ", ")
		if len(unchecked) > 0 {
			g.Detail += " (" + strings.Join(unchecked, "; ") + ")"
		}
	}
	return g
}

// relay says which process outside the instances accepts connections to a
// loopback address, or "" when an instance does (or the kernel carries them
// on into the instance's namespace). It opens one connection of its own,
// after the load, while the instances still run. Addresses off loopback are
// in namespaces whose sockets cannot be seen from here.
//
// An address nothing answers on any more (an instance a fault replaced)
// cannot be looked at: unchecked says so, and the address passes.
func relay(ns netns.Path, addr string, instanceCgroups map[string]bool) (problem, unchecked string) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return "", ""
	}
	a, found, err := sockets.AcceptorOf(ns, addr, 2*time.Second)
	var dialErr *net.OpError
	switch {
	case errors.As(err, &dialErr) && dialErr.Op == "dial":
		return "", fmt.Sprintf("%s did not answer after the load, so what accepts there was not seen", addr)
	case err != nil:
		return fmt.Sprintf("who accepts the connections to %s could not be seen: %v", addr, err), ""
	case !found:
		return "", ""
	}
	cg, err := limits.CPUCgroupOf(a.PID)
	if err != nil {
		return fmt.Sprintf("connections to %s are accepted by %s (pid %d), whose cgroup could not be read: %v", addr, a.Command, a.PID, err), ""
	}
	if instanceCgroups[cg] {
		return "", ""
	}
	return fmt.Sprintf("connections to %s are accepted by %s (pid %d, cgroup %s), a process of no instance: a userland proxy relays the load", addr, a.Command, a.PID, cg), ""
}

// SLOGate applies the sweep's SLO to the step alone: its failure means the
// application failed under this load, a measurement (broken).
func SLOGate(sr results.StepResult, slo experiment.SLO) results.Gate {
	_, details := results.Violations(sr, slo)
	if len(details) > 0 {
		return results.Gate{Name: GateSLO, Breaks: true, Detail: strings.Join(details, "; ")}
	}
	if sr.DueRPS <= 0 && sr.OfferedRPS <= 0 {
		// a closed loop offers no rate of its own: only latency and errors judge it
		return results.Gate{Name: GateSLO, Breaks: true, Passed: true, Detail: fmt.Sprintf("closed loop, no offered rate (throughput not judged): p99 %.1f ms, achieved %.1f rps, error ratio %.4f", sr.Corrected.P99, sr.AchievedRPS, sr.ErrorRatio())}
	}
	return results.Gate{Name: GateSLO, Breaks: true, Passed: true, Detail: fmt.Sprintf("p99 %.1f ms, achieved %.1f of %.1f rps due, error ratio %.4f", sr.Corrected.P99, sr.AchievedRPS, sr.DueRPS, sr.ErrorRatio())}
}

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

func littleCheck(connections int, offered float64, probe time.Duration) LittleCheck {
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
	g := results.Gate{Name: GateLittle}
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

// closedLittleGate is the little gate of a closed loop (iterations too),
// where it does not apply.
func closedLittleGate(users int) results.Gate {
	return results.Gate{Name: GateLittle, NotChecked: true,
		Detail: fmt.Sprintf("closed loop: each of the %d users waits for its answer before sending again, so no request waits for a free connection", users)}
}
