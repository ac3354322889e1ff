package swarm

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/placement"
)

// LoadRunner runs the load generator as a replicated Swarm job (one task,
// never restarted) of the orchbench image on the host network, as Nomad's
// batch job runs it: the same image, the same 256 MiB memory limit, no CPU
// cap unless the step sets generator_cores, the flags and script in its
// environment, the result read from the finished container.
type LoadRunner struct {
	Client *client.Client
	// Engines finds the engine of the node the load task ran on, where its
	// container, logs and result file are; nil resolves through Client.
	Engines *NodeEngines
	// Image is the orchbench image (default orchbench/orchbench:local).
	Image string
}

// The paths inside the load container: FROM scratch has no directories of
// its own, so these live at its root.
const (
	resultInJob = "/result.json"
	scriptInJob = "/script.lua"
)

func (*LoadRunner) Name() string { return Name }

// Run creates the job, waits for its task to end, reads the result and the
// generator's output, and removes the job.
func (l *LoadRunner) Run(ctx context.Context, req orchestrator.LoadRequest) (*loadgen.Result, []byte, error) {
	vars, err := orchestrator.LoadJobEnv(req, scriptInJob)
	if err != nil {
		return nil, nil, err
	}
	env := make([]string, 0, len(vars))
	for _, v := range vars {
		env = append(env, v.Name+"="+v.Value)
	}
	one := uint64(1)
	limit := &swarm.Limit{MemoryBytes: orchestrator.LoadMemoryMiB << 20}
	if req.GeneratorCores > 0 {
		limit.NanoCPUs = int64(math.Round(req.GeneratorCores * 1e9))
	}
	name := "orchbench-load-" + time.Now().UTC().Format("20060102t150405.000000000")
	name = strings.ReplaceAll(name, ".", "-")
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: map[string]string{"orchbench.load": req.StepID}},
		Mode:        swarm.ServiceMode{ReplicatedJob: &swarm.ReplicatedJob{MaxConcurrent: &one, TotalCompletions: &one}},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{Image: orchestrator.LoadImage(l.Image), Args: []string{"loadjob", "--out", resultInJob}, Env: env,
				Labels: map[string]string{"orchbench.load": req.StepID}},
			Resources: &swarm.ResourceRequirements{Limits: limit},
			// a failed load step is recorded as failed; retrying would silently
			// change what was measured
			RestartPolicy: &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionNone},
			// straight to the entry the node publishes, without a NAT hop of its own
			Networks:  []swarm.NetworkAttachmentConfig{{Target: "host"}},
			Placement: &swarm.Placement{Constraints: []string{placement.SwarmNotOn(placement.NodeRole, placement.LoadAvoids)}},
		},
	}
	created, err := l.Client.ServiceCreate(ctx, client.ServiceCreateOptions{Spec: spec})
	if err != nil {
		return nil, nil, fmt.Errorf("swarm: create load job %s: %w", name, err)
	}
	// the job is only a vehicle; its result lives in the archive
	defer l.Client.ServiceRemove(context.Background(), created.ID, client.ServiceRemoveOptions{})
	ctx, cancel := context.WithTimeout(ctx, req.Bound)
	defer cancel()
	task, err := l.waitDone(ctx, name, created.ID, req.MarkStarted)
	if err != nil {
		return nil, nil, err
	}
	failure := taskFailure(task)
	cs := task.Status.ContainerStatus
	if cs == nil || cs.ContainerID == "" {
		return nil, nil, fmt.Errorf("swarm: load job %s: task %s ended %s without a container: %s", name, shortID(task.ID), task.Status.State, taskError(task))
	}
	engines := l.Engines
	if engines == nil {
		engines = NewNodeEngines(l.Client)
	}
	e, err := engines.For(ctx, task.NodeID)
	if err != nil {
		return nil, nil, fmt.Errorf("swarm: load job %s: the result of task %s: %w", name, shortID(task.ID), err)
	}
	raw := logs(ctx, e.Client, cs.ContainerID)
	res, readErr := result(ctx, e.Client, cs.ContainerID)
	if readErr != nil {
		readErr = fmt.Errorf("on node %s (engine %s): %w", e.Name, e.Host, readErr)
	}
	return orchestrator.LoadJobResult(fmt.Sprintf("swarm: load job %s (task %s)", name, shortID(task.ID)), res, readErr, failure, raw)
}

// taskFailure says how a finished load task failed ("" when it exited 0).
func taskFailure(t swarm.Task) string {
	if cs := t.Status.ContainerStatus; cs != nil && cs.ExitCode != 0 {
		return fmt.Sprintf("task exited %d", cs.ExitCode)
	}
	if t.Status.State != swarm.TaskStateComplete {
		return fmt.Sprintf("task ended %s: %s", t.Status.State, taskError(t))
	}
	return ""
}

// waitDone waits until the job's task has ended, calling onRunning once it runs.
func (l *LoadRunner) waitDone(ctx context.Context, name, serviceID string, onRunning func()) (swarm.Task, error) {
	running := false
	for {
		res, err := l.Client.TaskList(ctx, client.TaskListOptions{Filters: client.Filters{}.Add("service", serviceID)})
		if err == nil {
			for _, t := range res.Items {
				if t.ServiceID != serviceID {
					continue
				}
				switch t.Status.State {
				case swarm.TaskStateRunning:
					if !running {
						running = true
						onRunning()
					}
				case swarm.TaskStateComplete, swarm.TaskStateFailed, swarm.TaskStateShutdown, swarm.TaskStateRejected, swarm.TaskStateOrphaned, swarm.TaskStateRemove:
					if !running {
						onRunning() // a fault waiting for the start must not wait forever
					}
					return t, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return swarm.Task{}, fmt.Errorf("swarm: load job %s did not finish: %w", name, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// logs is the generator's stdout then stderr.
func logs(ctx context.Context, c *client.Client, containerID string) []byte {
	rc, err := c.ContainerLogs(ctx, containerID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return nil
	}
	defer rc.Close()
	// a partial copy is still worth archiving
	var stdout, stderr bytes.Buffer
	_, _ = stdcopy.StdCopy(&stdout, &stderr, rc)
	return append(stdout.Bytes(), stderr.Bytes()...)
}

// result copies the result file out of the finished container.
func result(ctx context.Context, c *client.Client, containerID string) (*loadgen.Result, error) {
	res, err := c.CopyFromContainer(ctx, containerID, client.CopyFromContainerOptions{SourcePath: resultInJob})
	if err != nil {
		return nil, err
	}
	defer res.Content.Close()
	tr := tar.NewReader(res.Content)
	if _, err := tr.Next(); err != nil {
		return nil, fmt.Errorf("%s: %w", resultInJob, err)
	}
	return loadgen.ReadResult(tr, resultInJob)
}
