// Package gates holds the judgments a sweep passes on a step: pure
// functions of what the step pipeline (harness/sweep) measured, each
// returning a verdict with its detail. Nothing here reads a socket, a
// cgroup or an orchestrator; every gate has a test beside it that makes it
// fail.
package gates

import "github.com/orchbench/orchbench/harness/results"

// Gate names, as archived and shown in reports.
const (
	Healthy   = "healthy"
	Limits    = "limits"
	Probe     = "probe"
	LoadPath  = "load-path"
	Load      = "load"
	EarlyStop = results.GateEarlyStop
	Fault     = "fault"
	Responses = results.GateResponses
	SLO       = results.GateSLO
	Generator = "generator"
	Dataset   = "dataset"
	// Little checks that an open loop's connections can carry its rate.
	Little = "little"
	// ToolEntry refuses, before the load, a study tool aimed at one of
	// several instances: it takes one URL, so it would load one instance.
	ToolEntry = "tool-entry"
	// Shipping checks that the node agent ran, or did not, as the step
	// declared: a step measured "without the agent" while it ran measured a
	// busier node than its label says.
	Shipping = "shipping"
	// TaskEvents fails when a task restarted, exited, was OOM-killed or
	// replaced during the load and the step did not inject it: the
	// application ran on fewer instances than declared for part of the
	// step, so the step is broken, with what happened and when as its
	// reason. The orchestrator's events say when; the instances'
	// fingerprint before and after the load says whether, even when events
	// are lost or unreadable.
	TaskEvents = "task-events"
)
