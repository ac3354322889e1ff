//go:build integration

package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/test/wrongsetup"
)

// TestKubernetes brings the embedded Kubernetes up (twice: the second is a
// no-op), deploys Taewa's vertical variant as pods, measures one step
// through the NodePort with the load generator as a Job, and reads 0.5
// cores and 512 MiB back from the pod's cgroup; then sets a smaller CPU
// quota on the container's cgroup behind the kubelet's back, and the next step
// is invalid by the limits gate; faults during load, the hotel
// reservation's and the media microservices' quick sweeps, and the wrong
// setups of TestEveryGateCanFail that need no exec driver. Last, k8s-down leaves nothing on the host
// that k8s-up found absent.
func TestKubernetes(t *testing.T) {
	must(t, filepath.Join(root, "cluster", "kubernetes.sh"), "up")
	down := func() string { return must(t, filepath.Join(root, "cluster", "kubernetes.sh"), "down") }
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		sh(root, filepath.Join(root, "cluster", "kubernetes.sh"), "down")
	})
	if again := must(t, filepath.Join(root, "cluster", "kubernetes.sh"), "up"); !strings.Contains(again, "already up") {
		t.Fatalf("a second k8s-up was not a no-op:\n%s", again)
	}

	work := t.TempDir()
	vars := []string{"--var", "variant=vertical", "--var", "resource_scale=0.25", "--var", "job_name=taewa-k8s"}
	must(t, orchbench, append([]string{"pack", "run", "taewa", "--orchestrator", "kubernetes", "--wait"}, vars...)...)
	run := func(name string) results.StepResult {
		return taewaVerticalStep(t, "kubernetes", "taewa-k8s", filepath.Join(work, name))
	}

	s := run("right")
	limits := gateOf(s, "limits")
	if s.Outcome != results.OutcomeValid || !limits.Passed || !strings.Contains(limits.Detail, "quota: 0.5 cores (a CFS quota of 50000 µs per 100000 µs period)") ||
		!strings.Contains(limits.Detail, "512 MiB") {
		t.Fatalf("Kubernetes step %s, gates %+v", s.Outcome, s.Gates)
	}
	if s.Metadata["orchestrator"] != "kubernetes" || s.Metadata["entry"] != "node-port" || s.Metadata["load_runner"] != "kubernetes" {
		t.Errorf("orchestrator %v, entry %v, load runner %v", s.Metadata["orchestrator"], s.Metadata["entry"], s.Metadata["load_runner"])
	}
	if lp := gateOf(s, "load-path"); !lp.Passed {
		t.Errorf("load path on Kubernetes: %+v", lp)
	}
	if s.Accounting.Completed == 0 {
		t.Errorf("no request completed: %+v", s.Accounting)
	}
	// the pod behind the NodePort is probed at its own address, and its CPU
	// is the service's
	if probe := gateOf(s, "probe"); !strings.Contains(probe.Detail, "127.0.0.1:") || strings.Count(probe.Detail, " bytes in ") < 2 {
		t.Errorf("the probe did not check the NodePort and the pod behind it: %+v", probe)
	}
	if s.ServiceCores <= 0 {
		t.Errorf("service cores %g on Kubernetes: the pod's CPU was not attributed", s.ServiceCores)
	}

	// the task killed behind Kubernetes' back during the load: the kubelet
	// restarts it, the step reports it and is broken
	quota := containerQuotaFile(t, "taewa-k8s")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	killed := make(chan int, 1)
	go killWhenLoadRuns(ctx, cgroupProcs(filepath.Dir(quota)), 1500*time.Millisecond, killed)
	s = run("unplanned")
	if n := <-killed; n == 0 {
		t.Fatal("no task process was found to kill during the load")
	}
	events := gateOf(s, "task-events")
	if s.Outcome != results.OutcomeBroken || events.Passed || !strings.Contains(events.Detail, "taewa/taewa exited (exit code 137") {
		t.Fatalf("a task killed during the load on Kubernetes: step %s %v, task-events gate %+v", s.Outcome, s.Reasons, events)
	}
	t.Logf("unplanned kill: %s", events.Detail)

	// a wrong limit on Kubernetes only: the container's cgroup gets a quarter
	// core (cgroup v1 refuses a child quota above the pod's)
	quota = containerQuotaFile(t, "taewa-k8s")
	if err := os.WriteFile(quota, []byte("25000"), 0o644); err != nil {
		t.Fatalf("set %s: %v", quota, err)
	}
	s = run("wrong")
	limits = gateOf(s, "limits")
	if s.Outcome != results.OutcomeInvalid || limits.Passed || !strings.Contains(limits.Detail, "enforces 0.250 cores, the variant declares 0.500") {
		t.Fatalf("a wrong limit on Kubernetes: step %s, limits gate %+v", s.Outcome, limits)
	}
	must(t, orchbench, append([]string{"pack", "destroy", "taewa", "--orchestrator", "kubernetes"}, vars...)...)

	// a task killed, or a pod deleted, during load is recorded as on Nomad
	// and Swarm, and the sweep goes on
	for _, kind := range []string{"kill-task", "replace-instance"} {
		spec := strings.Replace(faultSpec, `orchestrators = ["nomad", "swarm"]`, `orchestrators = ["kubernetes"]`, 1)
		spec = strings.Replace(spec, `kind  = "kill-task"`, `kind  = "`+kind+`"`, 1)
		steps := sweepSteps(t, "fault", spec)
		if len(steps) != 1 || steps[0].Orchestrator != "kubernetes" {
			t.Fatalf("%s sweep on kubernetes: %d steps", kind, len(steps))
		}
		t.Run(kind, func(t *testing.T) { checkFaultStep(t, steps[0], kind) })
	}

	// the hotel reservation's quick sweep on Kubernetes, while it is up
	// (TestHotelReservation runs it on Nomad and Swarm)
	t.Run("hotel-reservation", func(t *testing.T) { hotelQuickSweep(t, "kubernetes") })
	// and the media microservices' (TestMediaMicroservices: Nomad, Swarm)
	t.Run("media-microservices", func(t *testing.T) { mediaQuickSweep(t, "kubernetes") })
	// the HorizontalPodAutoscaler, fed by metrics-server, scales Taewa out
	// under the same step as TestAutoscalerScalesOutOnNomad
	t.Run("hpa", hpaScalesOut)
	// and TestEveryGateCanFail's wrong setups that need no exec driver
	// (TestEveryGateCanFailOnSwarm runs them on Swarm): one bring-up of
	// Kubernetes for all, not one more for these (about 100 s of CI)
	t.Run("every-gate-can-fail", func(t *testing.T) { runWrongSetups(t, "kubernetes", wrongsetup.Elsewhere) })

	out := down()
	left, err := sh(root, "cluster/hoststate.sh", "diff", filepath.Join(root, ".state", "hoststate", "kubernetes"))
	left = withoutNomadAllocs(left)
	if err != nil || strings.TrimSpace(left) != "" {
		t.Fatalf("k8s-down left on the host what k8s-up found absent (%v):\n%s\n%s", err, left, out)
	}
	if _, err := os.Stat("/run/netns/orchbench-k8s"); err == nil {
		t.Fatalf("the node's network namespace outlived k8s-down")
	}
}

// containerQuotaFile is cpu.cfs_quota_us of the job's one task container,
// found by its process's cgroup (cgroup v1, as on this machine).
func containerQuotaFile(t *testing.T, job string) string {
	t.Helper()
	id := strings.TrimSpace(must(t, "nsenter", "--net=/run/netns/orchbench-k8s", "--", filepath.Join(root, ".tools", "bin", "kubectl"),
		"--kubeconfig", filepath.Join(root, ".state", "kubernetes", "admin.kubeconfig"), "-n", "orchbench-"+job,
		"get", "pods", "-o", "jsonpath={.items[0].status.containerStatuses[0].containerID}"))
	_, hexID, ok := strings.Cut(id, "://")
	if !ok {
		t.Fatalf("container ID %q", id)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) == 3 && strings.Contains(","+parts[1]+",", ",cpu,") && strings.HasSuffix(parts[2], "/"+hexID) {
				for _, mnt := range []string{"cpu,cpuacct", "cpu"} {
					f := filepath.Join("/sys/fs/cgroup", mnt, parts[2], "cpu.cfs_quota_us")
					if _, err := os.Stat(f); err == nil {
						return f
					}
				}
			}
		}
	}
	t.Fatalf("no cgroup v1 cpu controller holds container %s (pid list %d)", hexID, len(procs))
	return ""
}

// withoutNomadAllocs drops the mounts of Nomad allocations from a host
// diff: the embedded cluster runs on beside Kubernetes, and a sweep with
// shipping off stops and starts its node agent, whose new allocation
// mounts its secrets meanwhile. Those are Nomad's, and cluster-down's own
// check covers them; what k8s-down must remove is the rest.
func withoutNomadAllocs(diff string) string {
	alloc := filepath.Join(root, ".state", "nomad", "data", "alloc") + "/"
	var kept []string
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "mounts: "+alloc) {
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}
