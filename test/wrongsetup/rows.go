// Package wrongsetup holds the deliberately wrong setups of the validity
// tests (TestEveryGateCanFail and its Swarm, Kubernetes and multi-node
// counterparts): each row is an app block of one sweep and the outcome
// and failed gate it must end with. The single-node integration tests and
// the multi-node test share them, so a gate proven to fail on one cluster
// is held to the same row on the other.
package wrongsetup

import (
	"fmt"
	"strings"

	"github.com/orchbench/orchbench/harness/results"
)

// Row is one wrong setup: an app block of the sweep and what it must end as.
type Row struct {
	App   string
	Block string // the app block's body
	Want  results.Outcome
	Gate  string // the check that must have failed
	// Detail is what the failed gate's detail must name ({fwd}: the
	// forwarder's address)
	Detail string
}

// FaultyVars is the placeholder Faulty leaves in its vars for how the
// faulty server runs: the exec driver and its source on the embedded
// cluster, an image of it on the emulated nodes.
const FaultyVars = "{faulty_vars}"

// Faulty is the body of an app block running the faulty server with one
// fault; "unlimited" leaves it a CPU reservation only, so eight fit the node.
// A rate of 0 leaves the load levels to extra (a closed_loop block).
func Faulty(job, path string, rate int, extra string) string {
	rates := ""
	if rate > 0 {
		rates = fmt.Sprintf("rates       = [%d]\n    ", rate)
	}
	return fmt.Sprintf(`pack        = "taewa"
    variants    = ["unlimited"]
    vars        = { %s, resource_scale = 0.05, job_name = %q }
    path        = %q
    %s%s`, FaultyVars, job, path, rates, extra)
}

// TaewaBlock is an app block of the real Taewa with its vars and load
// levels given whole.
func TaewaBlock(variant, job, vars, body string) string {
	return fmt.Sprintf(`pack        = "taewa"
    variants    = [%q]
    vars        = { %s, job_name = %q }
    %s`, variant, vars, job, body)
}

// Taewa is the body of an app block of the real Taewa.
func Taewa(variant, job, extra string) string {
	return fmt.Sprintf(`pack        = "taewa"
    variants    = [%q]
    vars        = { resource_scale = 0.25, job_name = %q }
    rates       = [20]
    threads     = 1
    connections = 2
    %s`, variant, job, extra)
}

// LenientLag: cases that test another gate allow the generator 25 ms of
// lag: a shared 2-core machine may delay it by some milliseconds, and that
// is the generator gate's case, not theirs.
const LenientLag = "max_generator_lag = \"25ms\"\n    "

// Nomad are the rows of TestEveryGateCanFail, one per gate:
//
//	proxied            load through a TCP forwarder            invalid (load-path)
//	emptybody          200 with an empty body under load       broken  (responses)
//	overload-loop      1.2x the capacity, epoll-loop engine     broken  (throughput)
//	overload-goroutine the same with the goroutine engine      broken  (throughput), same due count
//	errors503          5 % of answers are 503                  broken  (errors, max_error_ratio)
//	starved            the generator capped at 0.1 core        invalid (generator saturated)
//	killed             the load job killed mid-step            invalid (load)
//	quota              the unlimited variant with a CPU quota  invalid (limits)
//	oom                a leak to the memory limit under load   broken  (task-events: OOM kill)
//	shipping-stray     shipping off, a stray shipper running   invalid (shipping)
//	little             1 connection for 2000 rps               invalid (little, before the load)
//	closed-starved     a closed loop, generator at 0.05 core   invalid (generator: the lag distorts latency)
//	tool-starved       Fortio capped at 0.05 core              invalid (generator: fortio saturated)
//	jmeter-starved     JMeter's thread group capped at 0.1 core invalid (generator: jmeter saturated)
//	artillery-starved  Artillery's phases capped at 0.1 core   invalid (generator: artillery saturated; load: its phase ran long)
//	tool-entry         Fortio given a service of 2 instances   invalid (tool-entry, before the load)
//
// The test arranges what the rows cannot say themselves: the forwarder
// behind {forward_lua} and {fwd}, the quota given behind Nomad's back, the
// load job killed, the stray shipper.
var Nomad = []Row{
	{"proxied", Taewa("baseline", "taewa-proxied", LenientLag+`script = "{forward_lua}" # wrk's own way to aim a thread elsewhere`),
		results.OutcomeInvalid, "load-path", "{fwd} (2 connections), which is not a registered instance"},
	{"emptybody", Faulty("faulty-empty", "/?fault=empty", 50, LenientLag+"threads = 1\n    connections = 4"),
		results.OutcomeBroken, "responses", "GET /: 0 body bytes on average"},
	{"overload-loop", Faulty("faulty-queue-loop", "/?fault=queue20", 60, LenientLag+"threads = 2\n    connections = 8\n    engine = \"loop\""),
		results.OutcomeBroken, "slo", "achieved"},
	{"overload-goroutine", Faulty("faulty-queue-goroutine", "/?fault=queue20", 60, LenientLag+"threads = 2\n    connections = 8\n    engine = \"goroutine\""),
		results.OutcomeBroken, "slo", "achieved"},
	{"errors503", Faulty("faulty-503", "/?fault=503", 100, LenientLag+"threads = 1\n    connections = 4"),
		results.OutcomeBroken, "slo", "error ratio"},
	// about 20 µs of generator CPU a request: 8000 rps need 0.16 cores
	{"starved", Faulty("faulty-starved", "/", 8000, "threads = 2\n    connections = 64\n    generator_cores = 0.1"),
		results.OutcomeInvalid, "generator", "generator saturated"},
	{"killed", Taewa("baseline", "taewa-killed", LenientLag),
		results.OutcomeInvalid, "load", "exited 137"},
	{"quota", Taewa("unlimited", "taewa-quota", LenientLag),
		results.OutcomeInvalid, "limits", "the variant declares no CPU cap"},
	// unlimited keeps a memory ceiling (8x the reservation): reached in ~2 s
	{"oom", Faulty("faulty-oom", "/?fault=hog", 20, LenientLag+"threads = 1\n    connections = 2"),
		results.OutcomeBroken, "task-events", "oom-killed"},
	// the sweep stops the node agent, but another shipper (one a user
	// started by hand) runs on the node the whole time
	{"shipping-stray", Taewa("baseline", "taewa-unshipped", LenientLag+`shipping = "off"`),
		results.OutcomeInvalid, "shipping", "vector (pid"},
	// one connection at the unloaded latency of a few ms carries a few
	// hundred rps: the rest would wait for it, in the generator
	{"little", TaewaBlock("baseline", "taewa-little", "resource_scale = 0.25", "rates = [2000]\n    threads = 1\n    connections = 1"),
		results.OutcomeInvalid, "little", "1 connections at the unloaded latency of"},
	// 0.05 core sends ~2500 requests a second; a closed loop of 32 users
	// on a fast server waits on the generator, not on the server
	{"closed-starved", Faulty("faulty-closed", "/", 0, "generator_cores = 0.05\n    closed_loop {\n      users = 32\n    }"),
		results.OutcomeInvalid, "generator", "the latency it reports is distorted"},
	{"tool-starved", Faulty("faulty-fortio", "/", 0, "runner = \"fortio\"\n    generator_cores = 0.05\n    closed_loop {\n      users = 16\n    }"),
		results.OutcomeInvalid, "generator", "fortio saturated: fortio used"},
	// 16 users of a fast server wait on a JVM held to 0.1 core: under a
	// 0.1 core CFS quota JMeter sent 1600 such requests in 24 s, throttled
	// in 568 of 572 periods; its start-up (30 s there) comes before the
	// measured window
	{"jmeter-starved", TaewaBlock("unlimited", "faulty-jmeter", FaultyVars+", resource_scale = 0.05",
		"runner = \"jmeter\"\n    generator_cores = 0.1\n    iterations {\n      threads = 16\n      loops = 50\n      max_duration = \"60s\"\n      request { path = \"/\" }\n    }"),
		results.OutcomeInvalid, "generator", "jmeter saturated: jmeter used"},
	ArtilleryStarved,
	{"tool-entry", TaewaBlock("horizontal", "taewa-fortio-two", "resource_scale = 0.25", "runner = \"fortio\"\n    closed_loop {\n      users = 4\n    }"),
		results.OutcomeInvalid, "tool-entry", "fortio takes one URL, but the service has 2 instances"},
}

// ArtilleryStarved: 200 arrivals a second, each a virtual user on a
// connection of its own, from an Artillery held to 0.1 core, against
// Taewa's fast path on a whole core, which keeps up. Artillery spends about
// 2 ms of CPU on a virtual user (Node 18), so 0.1 core creates some 50 a
// second: measured, it used 98 % of its 0.1 core, throttled in every CFS
// period, while Taewa used 3 % of its core. Its load gate fails too (it
// answered its users long after its phase); its start-up comes before the
// window.
var ArtilleryStarved = Row{"artillery-starved", TaewaBlock("baseline", "taewa-artillery-starved", "resource_scale = 1",
	"path = \"/?n=0\"\n    runner = \"artillery\"\n    generator_cores = 0.1\n    rates = [200]\n    phases {\n      phase {\n        duration = \"5s\"\n        rate     = 1\n      }\n    }"),
	results.OutcomeInvalid, "generator", "artillery saturated: artillery used"}

// LocustErrors: errors503's answers to Locust, which exits 1 when any
// request failed. Those failures are the application's errors, measured,
// so the step is broken by the SLO, not invalid for a failed tool. Only
// TestEveryGateCanFail runs it: the emulated nodes' registry has no
// Locust image.
var LocustErrors = Row{"locust-errors", Faulty("faulty-503-locust", "/?fault=503", 0, "runner = \"locust\"\n    closed_loop {\n      users = 4\n      think = \"100ms\"\n    }"),
	results.OutcomeBroken, "slo", "error ratio"}

// Elsewhere are the wrong setups that need no faulty server, for the
// orchestrators whose adapters translate the pack: Taewa's /?n=0 is the
// fast server, and its baseline at one core keeps up with what a starved
// generator can send.
var Elsewhere = []Row{
	{"little", TaewaBlock("baseline", "taewa-little", "resource_scale = 0.25", "rates = [2000]\n    threads = 1\n    connections = 1"),
		results.OutcomeInvalid, "little", "1 connections at the unloaded latency of"},
	// 0.05 core sends ~2500 requests a second; 4000 are due
	{"starved", TaewaBlock("baseline", "taewa-starved", "resource_scale = 1", "path = \"/?n=0\"\n    rates = [4000]\n    threads = 2\n    connections = 64\n    generator_cores = 0.05"),
		results.OutcomeInvalid, "generator", "generator saturated"},
	{"closed-starved", TaewaBlock("baseline", "taewa-closed-starved", "resource_scale = 1", "path = \"/?n=0\"\n    generator_cores = 0.05\n    closed_loop {\n      users = 32\n    }"),
		results.OutcomeInvalid, "generator", "the latency it reports is distorted"},
}

// ToolEntrySwarm: on Swarm each instance has a port of its own, so a tool
// that takes one URL would load one of them; behind a Kubernetes node port
// it may.
var ToolEntrySwarm = Row{"tool-entry", TaewaBlock("horizontal", "taewa-fortio-two", "resource_scale = 0.25", "runner = \"fortio\"\n    closed_loop {\n      users = 4\n    }"),
	results.OutcomeInvalid, "tool-entry", "fortio takes one URL, but the service has 2 instances"}

// JobOf is the job_name a row's block deploys.
func JobOf(r Row) string {
	_, rest, _ := strings.Cut(r.Block, "job_name = \"")
	job, _, _ := strings.Cut(rest, "\"")
	return job
}
