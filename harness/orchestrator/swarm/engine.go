package swarm

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// Engine runs translated jobs on the Docker Swarm whose manager the Docker
// client talks to (DOCKER_HOST, else the local socket). It talks only the
// Engine API: no docker CLI. Orchestrator puts it behind the harness's
// contract.
type Engine struct {
	Client *client.Client
	// Options are used for every translation (MHzPerCore for jobs whose
	// CPU intent is only in resources.cpu).
	Options Options
	// Progress, when set, receives a line whenever WaitHealthy's state changes.
	Progress io.Writer
	// PollInterval is how often WaitHealthy looks (default 500 ms).
	PollInterval time.Duration
	// Nodes reads the kernel of the node a task runs on; nil reads this machine.
	Nodes nodeprobe.Resolver
	// Engines finds the engine of the node a task runs on (its container
	// is known there only); nil resolves through Client.
	Engines *NodeEngines

	// managers, when the manager is reached over TCP, moves the client to
	// another manager when that one stops answering (failover.go).
	managers *managerDialer

	mu sync.Mutex
	// baseline is, per job, when the adapter last changed it (deploy or
	// fault): task failures before it are history, not a verdict.
	baseline map[string]time.Time
}

// NewEngine connects to the Docker daemon given by host ("" for DOCKER_HOST
// or the local socket), negotiating the API version.
func NewEngine(host string) (*Engine, error) {
	if h := cmp.Or(host, os.Getenv("DOCKER_HOST")); strings.HasPrefix(h, "ssh://") {
		// the Docker CLI runs ssh for these; this client would not
		return nil, fmt.Errorf("swarm: DOCKER_HOST=%s: the harness reaches Docker engines over tcp:// with TLS (DOCKER_TLS_VERIFY=1, DOCKER_CERT_PATH), not over SSH; a remote cluster's engines listen so (orchbench remote env, docs/remote.md)", h)
	}
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	c, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("swarm: docker client: %w", err)
	}
	managers := newManagerDialer(c.DaemonHost())
	if managers != nil {
		c.Close()
		if c, err = client.New(append(opts, client.WithDialContext(managers.DialContext))...); err != nil {
			return nil, fmt.Errorf("swarm: docker client: %w", err)
		}
	}
	return &Engine{Client: c, Engines: NewNodeEngines(c), managers: managers}, nil
}

// engines is the node resolver, made from the manager's client when unset.
func (a *Engine) engines() *NodeEngines {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.Engines == nil {
		a.Engines = NewNodeEngines(a.Client)
	}
	return a.Engines
}

// inspectTask inspects a task's container on the engine of its node; an
// error names the task, the node and the engine's address.
func (a *Engine) inspectTask(ctx context.Context, t swarm.Task) (client.ContainerInspectResult, *NodeEngine, error) {
	cs := t.Status.ContainerStatus
	if cs == nil || cs.ContainerID == "" {
		return client.ContainerInspectResult{}, nil, fmt.Errorf("task %s has no container (state %s)", shortID(t.ID), t.Status.State)
	}
	e, err := a.engines().For(ctx, t.NodeID)
	if err != nil {
		return client.ContainerInspectResult{}, nil, fmt.Errorf("task %s: %w", shortID(t.ID), err)
	}
	res, err := e.Client.ContainerInspect(ctx, cs.ContainerID, client.ContainerInspectOptions{})
	if err != nil {
		return res, e, fmt.Errorf("container %s of task %s on node %s (engine %s): %w", shortID(cs.ContainerID), shortID(t.ID), e.Name, e.Host, err)
	}
	return res, e, nil
}

// deployment is what the engine keeps of one job it deployed: the neutral
// orchestrator.Deployment has no room for the translation plan.
type deployment struct {
	Job string
	// Version is the job's orchbench.version label (see Plan.Version).
	Version string
	Plan    *Plan
	// NetworkID is the job's overlay network; ServiceIDs maps service names to IDs.
	NetworkID  string
	ServiceIDs map[string]string
	// Fresh is true when Deploy changed something, so setup hooks (datasets) must run.
	Fresh bool
	// Started is when Deploy began; DeployDuration runs from it until WaitHealthy passed.
	Started        time.Time
	DeployDuration time.Duration
}

func (a *Engine) poll() time.Duration {
	if a.PollInterval > 0 {
		return a.PollInterval
	}
	return 500 * time.Millisecond
}

func (a *Engine) setBaseline(job string, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.baseline == nil {
		a.baseline = map[string]time.Time{}
	}
	a.baseline[job] = t
}

func (a *Engine) baselineOf(d *deployment) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.baseline[d.Job]; ok && t.After(d.Started) {
		return t
	}
	return d.Started
}

// manager checks that the daemon is an active swarm manager.
func (a *Engine) manager(ctx context.Context) error {
	info, err := a.Client.Info(ctx, client.InfoOptions{})
	if err != nil {
		return fmt.Errorf("swarm: docker info: %w", err)
	}
	s := info.Info.Swarm
	if s.LocalNodeState != swarm.LocalNodeStateActive || !s.ControlAvailable {
		return fmt.Errorf("swarm: the Docker daemon is not an active swarm manager (node state %q%s); run `docker swarm init --advertise-addr 127.0.0.1`", s.LocalNodeState, errSuffix(s.Error))
	}
	return nil
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func jobFilter(job string) client.Filters {
	return client.Filters{}.Add("label", LabelJob+"="+job)
}

// jobServices lists the services that carry the job's label, by name.
func (a *Engine) jobServices(ctx context.Context, job string) (map[string]swarm.Service, error) {
	res, err := a.Client.ServiceList(ctx, client.ServiceListOptions{Filters: jobFilter(job), Status: true})
	if err != nil {
		return nil, fmt.Errorf("swarm: list services of job %s: %w", job, err)
	}
	out := map[string]swarm.Service{}
	for _, s := range res.Items {
		out[s.Spec.Name] = s
	}
	return out, nil
}

// Deploy creates the job's overlay network and services, or reuses them
// when every service carries the job's version label and runs all its
// replicas. Otherwise it updates the services that exist (a changed version
// rolls their tasks; an unchanged one is forced to replace them), creates
// the missing ones and removes the job's services the plan no longer has.
func (a *Engine) Deploy(ctx context.Context, job *api.Job) (*deployment, error) {
	started := time.Now()
	plan, err := Translate(job, a.Options)
	if err != nil {
		return nil, err
	}
	if err := a.manager(ctx); err != nil {
		return nil, err
	}
	d := &deployment{Job: plan.Job, Version: plan.Version, Plan: plan, ServiceIDs: map[string]string{}, Started: started}
	current, err := a.jobServices(ctx, plan.Job)
	if err != nil {
		return nil, err
	}
	if d.NetworkID, err = a.ensureNetwork(ctx, plan); err != nil {
		return nil, err
	}
	if a.reusable(plan, current) {
		for name, s := range current {
			d.ServiceIDs[name] = s.ID
		}
		a.setBaseline(plan.Job, started)
		return d, nil
	}
	d.Fresh = true
	a.setBaseline(plan.Job, started)
	for name, s := range current {
		if plan.Service(name) == nil {
			if _, err := a.Client.ServiceRemove(ctx, s.ID, client.ServiceRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
				return nil, fmt.Errorf("swarm: job %s: remove service %s, which the job no longer has: %w", plan.Job, name, err)
			}
		}
	}
	for _, svc := range plan.Services {
		spec := plan.Specs[svc.Name]
		spec.TaskTemplate.Networks = append([]swarm.NetworkAttachmentConfig(nil), spec.TaskTemplate.Networks...)
		for i := range spec.TaskTemplate.Networks {
			spec.TaskTemplate.Networks[i].Target = d.NetworkID
		}
		if cur, ok := current[svc.Name]; ok {
			if cur.Spec.Labels[LabelVersion] == plan.Version {
				// same definition, not all running: replace the tasks
				spec.TaskTemplate.ForceUpdate = cur.Spec.TaskTemplate.ForceUpdate + 1
			}
			if _, err := a.Client.ServiceUpdate(ctx, cur.ID, client.ServiceUpdateOptions{Version: cur.Version, Spec: spec}); err != nil {
				return nil, fmt.Errorf("swarm: job %s: update service %s: %w", plan.Job, svc.Name, err)
			}
			d.ServiceIDs[svc.Name] = cur.ID
			continue
		}
		res, err := a.Client.ServiceCreate(ctx, client.ServiceCreateOptions{Spec: spec})
		if err != nil {
			return nil, fmt.Errorf("swarm: job %s: create service %s: %w", plan.Job, svc.Name, err)
		}
		d.ServiceIDs[svc.Name] = res.ID
	}
	return d, nil
}

// reusable: the same services, all of this version, all replicas running.
func (a *Engine) reusable(plan *Plan, current map[string]swarm.Service) bool {
	if len(current) != len(plan.Services) {
		return false
	}
	for _, svc := range plan.Services {
		cur, ok := current[svc.Name]
		if !ok || cur.Spec.Labels[LabelVersion] != plan.Version || cur.ServiceStatus == nil {
			return false
		}
		if cur.UpdateStatus != nil && cur.UpdateStatus.State != swarm.UpdateStateCompleted {
			return false
		}
		if cur.ServiceStatus.RunningTasks != uint64(svc.Replicas) || cur.ServiceStatus.DesiredTasks != uint64(svc.Replicas) {
			return false
		}
	}
	return true
}

// ensureNetwork creates the job's attachable overlay network unless it exists.
func (a *Engine) ensureNetwork(ctx context.Context, plan *Plan) (string, error) {
	list, err := a.Client.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("name", plan.Network)})
	if err != nil {
		return "", fmt.Errorf("swarm: list networks: %w", err)
	}
	for _, n := range list.Items {
		if n.Name != plan.Network { // the name filter matches substrings
			continue
		}
		if n.Driver != "overlay" || n.Scope != "swarm" {
			return "", fmt.Errorf("swarm: network %s exists as a %s network of scope %s, not the swarm overlay the adapter makes; remove it", plan.Network, n.Driver, n.Scope)
		}
		return n.ID, nil
	}
	res, err := a.Client.NetworkCreate(ctx, plan.Network, client.NetworkCreateOptions{
		Driver: "overlay", Scope: "swarm", Attachable: true,
		Labels: map[string]string{LabelJob: plan.Job},
	})
	if err != nil {
		return "", fmt.Errorf("swarm: create network %s: %w", plan.Network, err)
	}
	return res.ID, nil
}

// serviceTasks lists the tasks of one service.
func (a *Engine) serviceTasks(ctx context.Context, serviceID string) ([]swarm.Task, error) {
	res, err := a.Client.TaskList(ctx, client.TaskListOptions{Filters: client.Filters{}.Add("service", serviceID)})
	if err != nil {
		return nil, fmt.Errorf("swarm: tasks of service %s: %w", serviceID, err)
	}
	var out []swarm.Task
	for _, t := range res.Items {
		if t.ServiceID == serviceID {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Slot != out[j].Slot {
			return out[i].Slot < out[j].Slot
		}
		return out[i].CreatedAt.Before(out[j].CreatedAt)
	})
	return out, nil
}

// current reports whether a task runs the deployment's definition.
func current(t swarm.Task, version string) bool {
	cs := t.Spec.ContainerSpec
	return cs != nil && cs.Labels[LabelVersion] == version
}

// running tasks of the deployment's version that Swarm wants running.
func runningTasks(tasks []swarm.Task, version string) []swarm.Task {
	var out []swarm.Task
	for _, t := range tasks {
		if t.DesiredState == swarm.TaskStateRunning && t.Status.State == swarm.TaskStateRunning && current(t, version) && t.Status.ContainerStatus != nil {
			out = append(out, t)
		}
	}
	return out
}

func (a *Engine) serviceID(ctx context.Context, d *deployment, name string) (string, error) {
	if id, ok := d.ServiceIDs[name]; ok {
		return id, nil
	}
	res, err := a.Client.ServiceInspect(ctx, name, client.ServiceInspectOptions{})
	if err != nil {
		return "", fmt.Errorf("swarm: job %s: service %s: %w", d.Job, name, err)
	}
	if res.Service.Spec.Labels[LabelJob] != d.Job {
		return "", fmt.Errorf("swarm: service %s does not belong to job %s", name, d.Job)
	}
	return res.Service.ID, nil
}

// health runs the service's check against one of its containers, on the
// container's node, in the container's network namespace, through the
// node's probe: "healthy", "unhealthy", or "none" when the service has no
// check. The PID is the container's process on its node.
func (a *Engine) health(ctx context.Context, svc *translate.Service, node, containerID string) (string, int, error) {
	probe := a.Nodes.Node(node)
	if svc.Check == nil {
		p, err := probe.ContainerProcess(ctx, containerID)
		if err != nil {
			return "", 0, err
		}
		return "none", p.PID, nil
	}
	r, err := probe.CheckContainer(ctx, checkRequest(svc.Check, containerID))
	if err != nil {
		return "", 0, err
	}
	if !r.Healthy {
		return "unhealthy", r.PID, nil
	}
	return "healthy", r.PID, nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Revision is the identity of the running definition: the services' IDs and
// spec versions, which change on any update or re-creation.
func (a *Engine) Revision(ctx context.Context, d *deployment) (string, error) {
	services, err := a.jobServices(ctx, d.Job)
	if err != nil {
		return "", err
	}
	if len(services) == 0 {
		return "", fmt.Errorf("swarm: job %s has no services", d.Job)
	}
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(services)) {
		s := services[name]
		fmt.Fprintf(h, "%s %s %d %s\n", name, s.ID, s.Version.Index, s.Spec.Labels[LabelVersion])
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// Stop removes the job's services, waits until their containers are gone,
// then removes its network and data volumes.
func (a *Engine) Stop(ctx context.Context, d *deployment) error {
	services, err := a.jobServices(ctx, d.Job)
	if err != nil {
		return err
	}
	for name, s := range services {
		if _, err := a.Client.ServiceRemove(ctx, s.ID, client.ServiceRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("swarm: job %s: remove service %s: %w", d.Job, name, err)
		}
	}
	// containers carry the job label (the container spec's labels), on
	// whichever node ran them
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left, err := a.jobContainers(ctx, d.Job)
		if err != nil {
			return err
		}
		if left == "" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("swarm: job %s: container(s) still there 2 minutes after its services were removed: %s", d.Job, left)
		}
		if err := sleep(ctx, a.poll()); err != nil {
			return err
		}
	}
	nets, err := a.Client.NetworkList(ctx, client.NetworkListOptions{Filters: jobFilter(d.Job)})
	if err != nil {
		return fmt.Errorf("swarm: job %s: list networks: %w", d.Job, err)
	}
	for _, n := range nets.Items {
		// the overlay's endpoints are released shortly after the containers go
		if err := retry(ctx, 30*time.Second, a.poll(), func() error {
			_, err := a.Client.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
			if cerrdefs.IsNotFound(err) {
				return nil
			}
			return err
		}); err != nil {
			return fmt.Errorf("swarm: job %s: remove network %s: %w", d.Job, n.Name, err)
		}
	}
	// the node drops its copy of a removed overlay network a moment later
	if err := retry(ctx, 30*time.Second, a.poll(), func() error {
		nets, err := a.Client.NetworkList(ctx, client.NetworkListOptions{Filters: jobFilter(d.Job)})
		if err == nil && len(nets.Items) > 0 {
			err = fmt.Errorf("network %s is still listed after its removal", nets.Items[0].Name)
		}
		return err
	}); err != nil {
		return fmt.Errorf("swarm: job %s: %w", d.Job, err)
	}
	vols, err := a.Client.VolumeList(ctx, client.VolumeListOptions{Filters: jobFilter(d.Job)})
	if err != nil {
		return fmt.Errorf("swarm: job %s: list volumes: %w", d.Job, err)
	}
	for _, v := range vols.Items {
		if err := retry(ctx, 30*time.Second, a.poll(), func() error {
			_, err := a.Client.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{})
			if cerrdefs.IsNotFound(err) {
				return nil
			}
			return err
		}); err != nil {
			return fmt.Errorf("swarm: job %s: remove volume %s: %w", d.Job, v.Name, err)
		}
	}
	a.mu.Lock()
	delete(a.baseline, d.Job)
	a.mu.Unlock()
	return nil
}

// jobContainers says which of the job's containers remain on every ready
// node's engine ("" when none does).
func (a *Engine) jobContainers(ctx context.Context, job string) (string, error) {
	engines, err := a.engines().All(ctx)
	if err != nil {
		return "", fmt.Errorf("swarm: job %s: %w", job, err)
	}
	var left []string
	for _, e := range engines {
		res, err := e.Client.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: jobFilter(job)})
		if err != nil {
			return "", fmt.Errorf("swarm: job %s: list containers on node %s (engine %s): %w", job, e.Name, e.Host, err)
		}
		for _, c := range res.Items {
			left = append(left, fmt.Sprintf("%s on %s (%s)", shortID(c.ID), e.Name, c.State))
		}
	}
	return strings.Join(left, ", "), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// retry calls f until it succeeds or within runs out, returning its last error.
func retry(ctx context.Context, within, every time.Duration, f func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		if serr := sleep(ctx, every); serr != nil {
			return errors.Join(err, serr)
		}
	}
}

// taskError is the most telling message of a task's status.
func taskError(t swarm.Task) string {
	msg := strings.TrimSpace(t.Status.Err)
	if msg == "" {
		msg = t.Status.Message
	}
	if cs := t.Status.ContainerStatus; cs != nil && cs.ExitCode != 0 && !strings.Contains(msg, "exit") {
		msg += fmt.Sprintf(" (exit code %d)", cs.ExitCode)
	}
	return msg
}
