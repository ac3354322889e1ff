package nodeprobe

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/harness/limits"
)

// The probe publishes every Nomad and Swarm task container's CPU time for
// VictoriaMetrics to scrape (GET /metrics): the metric the Nomad
// Autoscaler's policies read. Nomad's own per-allocation CPU series come
// from Docker's stats, which some kernels' cgroup layouts leave at zero
// (this testbed's machines among them) while the cgroup's own accounting,
// which every limits and CPU gate here reads, is right. An autoscaler that
// reads zero never scales, and would be measured as one that does not.

// TaskCPUSeconds is one task container's CPU time so far: a Nomad task's
// (Job, Group, Task, Alloc) or a Swarm task's (SwarmService, SwarmTask).
type TaskCPUSeconds struct {
	Job, Group, Task, Alloc string
	SwarmService, SwarmTask string
	Seconds                 float64
}

// taskCPUSeconds reads the CPU time of every task, by its cgroup: a
// container started with a Nomad task's environment or as a Swarm task,
// and a process of Nomad's exec driver (its cgroup under Nomad's, its
// environment the task's).
func taskCPUSeconds(procs []limits.Membership) []TaskCPUSeconds {
	seen := map[string]bool{} // CPU cgroups read, or found to be no task's
	var out []TaskCPUSeconds
	for _, m := range procs { // lowest PID first: a container's init
		cgroup, err := limits.CPUCgroupOf(m.PID)
		if err != nil || seen[cgroup] {
			continue
		}
		id := ContainerIDOf(m)
		if id == "" && !strings.Contains(cgroup, "nomad") {
			continue // neither a container nor under Nomad's cgroups
		}
		seen[cgroup] = true
		var rec dockerRecord
		if id != "" {
			rec = dockerRecordOf(id)
		}
		env, ok := environOf(m.PID, rec)
		if !ok {
			delete(seen, cgroup) // exited: another process of it may tell
			continue
		}
		vars := map[string]string{}
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "NOMAD_") {
				vars[k] = v
			}
		}
		t := TaskCPUSeconds{Job: vars["NOMAD_JOB_NAME"], Group: vars["NOMAD_GROUP_NAME"], Task: vars["NOMAD_TASK_NAME"], Alloc: vars["NOMAD_ALLOC_ID"],
			SwarmService: rec.Config.Labels["com.docker.swarm.service.name"], SwarmTask: rec.Config.Labels["com.docker.swarm.task.id"]}
		if (t.Alloc == "" || t.Task == "") && (t.SwarmService == "" || t.SwarmTask == "") {
			continue
		}
		u, err := limits.UsageOf(cgroup)
		if err != nil {
			continue
		}
		t.Seconds = u.CPU.Seconds()
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Alloc+out[i].Task+out[i].SwarmTask < out[j].Alloc+out[j].Task+out[j].SwarmTask
	})
	return out
}

// TaskCPUMetric is the counter's name.
const TaskCPUMetric = "orchbench_task_cpu_seconds_total"

// writeTaskMetrics writes the samples in Prometheus' text format.
func writeTaskMetrics(w io.Writer, samples []TaskCPUSeconds) {
	fmt.Fprintf(w, "# HELP %s CPU time (user and system) of a Nomad task's container, from its cgroup, read by the node probe.\n", TaskCPUMetric)
	fmt.Fprintf(w, "# TYPE %s counter\n", TaskCPUMetric)
	for _, s := range samples {
		labels := fmt.Sprintf("nomad_job=%q,task_group=%q,task=%q,alloc_id=%q", s.Job, s.Group, s.Task, s.Alloc)
		if s.SwarmTask != "" {
			labels = fmt.Sprintf("swarm_service=%q,swarm_task=%q", s.SwarmService, s.SwarmTask)
		}
		fmt.Fprintf(w, "%s{%s} %s\n", TaskCPUMetric, labels, strconv.FormatFloat(s.Seconds, 'f', 6, 64))
	}
}

// serveTaskMetrics answers GET /metrics with this machine's task CPU. It
// needs no token: it says how busy tasks are, nothing more, and a scraper
// must read it without the harness's secret.
func serveTaskMetrics(w http.ResponseWriter, _ *http.Request) {
	procs, err := limits.Processes()
	if err != nil {
		http.Error(w, "processes: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	writeTaskMetrics(w, taskCPUSeconds(procs))
}
