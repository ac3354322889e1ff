//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/results"
)

// Every gate must be able to fail. One sweep runs a deliberately wrong
// setup per configuration on the real cluster, and each must end with the
// right outcome and a reason that names what was wrong:
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
//	tool-entry         Fortio given a service of 2 instances   invalid (tool-entry, before the load)
//
// The same sweep runs on Swarm and Kubernetes with the rows that need no
// exec driver (validity_others_test.go).
//
// The faulty servers are test/integration/testdata/faulty-server.js, run
// by the taewa pack's exec driver, so they are scheduled, registered and
// checked like the real service. The Redis-flush case (dataset gate) is
// TestDatasetMarkerAndVerification.
// wrongSetup is one row: an app block of the sweep and what it must end as.
type wrongSetup struct {
	app    string
	block  string // the app block's body
	want   results.Outcome
	gate   string // the check that must have failed
	detail string // and what its detail must name ({fwd}: the forwarder)
}

// faulty is the body of an app block running the faulty server with one
// fault; "unlimited" leaves it a CPU reservation only, so eight fit the node.
// A rate of 0 leaves the load levels to extra (a closed_loop block).
func faulty(job, path string, rate int, extra string) string {
	rates := ""
	if rate > 0 {
		rates = fmt.Sprintf("rates       = [%d]\n    ", rate)
	}
	return fmt.Sprintf(`pack        = "taewa"
    variants    = ["unlimited"]
    vars        = { driver = "exec", resource_scale = 0.05, app_source = "{faulty}", job_name = %q }
    path        = %q
    %s%s`, job, path, rates, extra)
}

// taewaBlock is an app block of the real Taewa with its vars and load
// levels given whole.
func taewaBlock(variant, job, vars, body string) string {
	return fmt.Sprintf(`pack        = "taewa"
    variants    = [%q]
    vars        = { %s, job_name = %q }
    %s`, variant, vars, job, body)
}

// taewa is the body of an app block of the real Taewa.
func taewa(variant, job, extra string) string {
	return fmt.Sprintf(`pack        = "taewa"
    variants    = [%q]
    vars        = { resource_scale = 0.25, job_name = %q }
    rates       = [20]
    threads     = 1
    connections = 2
    %s`, variant, job, extra)
}

// Cases that test another gate allow the generator 25 ms of lag: a shared
// 2-core machine may delay it by some milliseconds, and that is the
// generator gate's case, not theirs.
const lenientLag = "max_generator_lag = \"25ms\"\n    "

var wrongSetups = []wrongSetup{
	{"proxied", taewa("baseline", "taewa-proxied", lenientLag+`script = "{forward_lua}" # wrk's own way to aim a thread elsewhere`),
		results.OutcomeInvalid, "load-path", "{fwd} (2 connections), which is not a registered instance"},
	{"emptybody", faulty("faulty-empty", "/?fault=empty", 50, lenientLag+"threads = 1\n    connections = 4"),
		results.OutcomeBroken, "responses", "GET /: 0 body bytes on average"},
	{"overload-loop", faulty("faulty-queue-loop", "/?fault=queue20", 60, lenientLag+"threads = 2\n    connections = 8\n    engine = \"loop\""),
		results.OutcomeBroken, "slo", "achieved"},
	{"overload-goroutine", faulty("faulty-queue-goroutine", "/?fault=queue20", 60, lenientLag+"threads = 2\n    connections = 8\n    engine = \"goroutine\""),
		results.OutcomeBroken, "slo", "achieved"},
	{"errors503", faulty("faulty-503", "/?fault=503", 100, lenientLag+"threads = 1\n    connections = 4"),
		results.OutcomeBroken, "slo", "error ratio"},
	// about 20 µs of generator CPU a request: 8000 rps need 0.16 cores
	{"starved", faulty("faulty-starved", "/", 8000, "threads = 2\n    connections = 64\n    generator_cores = 0.1"),
		results.OutcomeInvalid, "generator", "generator saturated"},
	{"killed", taewa("baseline", "taewa-killed", lenientLag),
		results.OutcomeInvalid, "load", "exited 137"},
	{"quota", taewa("unlimited", "taewa-quota", lenientLag),
		results.OutcomeInvalid, "limits", "the variant declares no CPU cap"},
	// unlimited keeps a memory ceiling (8x the reservation): reached in ~2 s
	{"oom", faulty("faulty-oom", "/?fault=hog", 20, lenientLag+"threads = 1\n    connections = 2"),
		results.OutcomeBroken, "task-events", "oom-killed"},
	// the sweep stops the node agent, but another shipper (one a user
	// started by hand) runs on the node the whole time
	{"shipping-stray", taewa("baseline", "taewa-unshipped", lenientLag+`shipping = "off"`),
		results.OutcomeInvalid, "shipping", "vector (pid"},
	// one connection at the unloaded latency of a few ms carries a few
	// hundred rps: the rest would wait for it, in the generator
	{"little", taewaBlock("baseline", "taewa-little", "resource_scale = 0.25", "rates = [2000]\n    threads = 1\n    connections = 1"),
		results.OutcomeInvalid, "little", "1 connections at the unloaded latency of"},
	// 0.05 core sends ~2500 requests a second; a closed loop of 32 users
	// on a fast server waits on the generator, not on the server
	{"closed-starved", faulty("faulty-closed", "/", 0, "generator_cores = 0.05\n    closed_loop {\n      users = 32\n    }"),
		results.OutcomeInvalid, "generator", "the latency it reports is distorted"},
	{"tool-starved", faulty("faulty-fortio", "/", 0, "runner = \"fortio\"\n    generator_cores = 0.05\n    closed_loop {\n      users = 16\n    }"),
		results.OutcomeInvalid, "generator", "fortio saturated: fortio used"},
	{"tool-entry", taewaBlock("horizontal", "taewa-fortio-two", "resource_scale = 0.25", "runner = \"fortio\"\n    closed_loop {\n      users = 4\n    }"),
		results.OutcomeInvalid, "tool-entry", "fortio takes one URL, but the service has 2 instances"},
}

// validitySpec is one sweep named name on orch with an app per wrong
// setup; fill replaces the rows' placeholders.
func validitySpec(name, orch string, rows []wrongSetup, fill *strings.Replacer) string {
	var b strings.Builder
	fmt.Fprintf(&b, `sweep %q {
  seed          = 11
  repetitions   = 1
  deploy        = "per-configuration"
  warmup        = "1s"
  duration      = "4s"
  cooldown      = "0s"
  early_stop    = false
  orchestrators = [%q]
`, name, orch)
	for _, c := range rows {
		fmt.Fprintf(&b, "\n  app %q {\n    %s\n  }\n", c.app, fill.Replace(c.block))
	}
	b.WriteString(`
  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
`)
	return b.String()
}

func TestEveryGateCanFail(t *testing.T) {
	work := t.TempDir()
	faultyServer, err := filepath.Abs(filepath.Join("testdata", "faulty-server.js"))
	if err != nil {
		t.Fatal(err)
	}
	fwd := startForwarder(t, "taewa-proxied")
	script := fmt.Sprintf("function setup(thread)\n  thread.addr = %q\nend\n", fwd)
	if err := os.WriteFile(filepath.Join(work, "forward.lua"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := validitySpec("validity", "nomad", wrongSetups, strings.NewReplacer("{faulty}", faultyServer, "{forward_lua}", filepath.Join(work, "forward.lua")))
	specFile := filepath.Join(work, "validity.hcl")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}

	// The unlimited variant, deployed ahead, then given a CPU quota behind
	// Nomad's back: the sweep reuses the running job and must notice.
	must(t, orchbench, "pack", "run", "taewa", "--wait", "--var", "variant=unlimited", "--var", "job_name=taewa-quota", "--var", "resource_scale=0.25")
	t.Cleanup(func() {
		sh(root, orchbench, "pack", "destroy", "taewa", "--var", "variant=unlimited", "--var", "job_name=taewa-quota")
	})
	must(t, "docker", "update", "--cpus", "0.5", containerOf(t, "taewa-quota", "taewa"))

	// a stray log shipper: any executable named vector is one to the gate
	stray := filepath.Join(work, "vector")
	must(t, "cp", "/bin/sleep", stray)
	shipper := exec.Command(stray, "900")
	if err := shipper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shipper.Process.Kill(); _ = shipper.Wait() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := make(chan string, 1)
	go killLoadJobOf(ctx, t, "killed-", 2*time.Second, killed)

	dir := filepath.Join(work, "results")
	must(t, orchbench, "sweep", "-f", specFile, "--dir", dir, "--reports", filepath.Join(work, "reports"))
	select {
	case alloc := <-killed:
		t.Logf("killed load allocation %s mid-step", alloc)
	default:
		t.Fatal("the load job of the killed step was never found to kill")
	}

	steps := checkWrongSetups(t, dir, "validity", wrongSetups, strings.NewReplacer("{fwd}", fwd))
	due := map[string]int64{}
	for _, st := range steps {
		if st.Accounting != nil {
			due[st.App] = st.Accounting.Due
		}
	}
	// the schedule decides what is due, not the engine
	if due["overload-loop"] == 0 || due["overload-loop"] != due["overload-goroutine"] {
		t.Errorf("due at 1.2x capacity: loop %d, goroutine %d; want equal and non-zero", due["overload-loop"], due["overload-goroutine"])
	}
	for _, s := range steps {
		if strings.HasPrefix(s.App, "overload-") && s.Accounting != nil && s.Accounting.Unsent == 0 {
			t.Errorf("%s: a server offered 1.2x its capacity left no backlog: %+v", s.App, *s.Accounting)
		}
	}
}

// startForwarder relays TCP connections to a healthy instance of service,
// found in Consul at each accept: the proxy the load-path gate must see.
func startForwarder(t *testing.T, service string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				target, err := consulInstance(service)
				if err != nil {
					return
				}
				outConn, err := net.DialTimeout("tcp", target, 2*time.Second)
				if err != nil {
					return
				}
				defer outConn.Close()
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); io.Copy(outConn, in); outConn.(*net.TCPConn).CloseWrite() }()
				go func() { defer wg.Done(); io.Copy(in, outConn); in.(*net.TCPConn).CloseWrite() }()
				wg.Wait()
			}()
		}
	}()
	return l.Addr().String()
}

func consulInstance(service string) (string, error) {
	resp, err := http.Get("http://127.0.0.1:8500/v1/health/service/" + service + "?passing=true")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var entries []struct {
		Service struct {
			Address string
			Port    int
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil || len(entries) == 0 {
		return "", fmt.Errorf("no passing instance of %s (%v)", service, err)
	}
	return net.JoinHostPort(entries[0].Service.Address, fmt.Sprint(entries[0].Service.Port)), nil
}

// containerOf names the docker container of a job's task (Nomad names it
// <task>-<alloc ID>).
func containerOf(t *testing.T, job, task string) string {
	t.Helper()
	c, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	allocs, _, err := c.Jobs().Allocations(job, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range allocs {
		if a.ClientStatus == "running" {
			return task + "-" + a.ID
		}
	}
	t.Fatalf("no running allocation of %s", job)
	return ""
}

// killLoadJobOf SIGKILLs the load task of the first dispatched load job
// whose step starts with stepPrefix once it has run for after, and reports
// the allocation.
func killLoadJobOf(ctx context.Context, t *testing.T, stepPrefix string, after time.Duration, killed chan<- string) {
	c, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		t.Error(err)
		return
	}
	for ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		jobs, _, err := c.Jobs().PrefixList("orchbench-loadgen/dispatch-")
		if err != nil {
			continue
		}
		for _, j := range jobs {
			job, _, err := c.Jobs().Info(j.ID, nil)
			if err != nil || !strings.HasPrefix(job.Meta["step"], stepPrefix) {
				continue
			}
			allocs, _, err := c.Jobs().Allocations(j.ID, false, nil)
			if err != nil || len(allocs) == 0 || allocs[0].ClientStatus != "running" {
				continue
			}
			time.Sleep(after)
			alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
			if err != nil {
				t.Errorf("load alloc: %v", err)
				return
			}
			if err := c.Allocations().Signal(alloc, nil, "load", "SIGKILL"); err != nil {
				t.Errorf("kill the load task: %v", err)
				return
			}
			killed <- alloc.ID
			return
		}
	}
}
