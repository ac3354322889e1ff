package swarm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
	"github.com/orchbench/orchbench/harness/hostinfo"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/placement"
)

// Endpoints lists the running, healthy instances of one service of the
// deployment. The measured service (the plan's entry) is given by its host
// port on the task's node: the node's address and the port Swarm published
// for the task (its Status.PortStatus). Other services are given by their overlay
// address, which only containers on the job's network reach.
func (a *Engine) Endpoints(ctx context.Context, d *deployment, service string) ([]orchestrator.Endpoint, error) {
	svc := d.Plan.Service(service)
	if svc == nil {
		return nil, fmt.Errorf("swarm: job %s has no service %s", d.Job, service)
	}
	id, err := a.serviceID(ctx, d, svc.Name)
	if err != nil {
		return nil, err
	}
	tasks, err := a.serviceTasks(ctx, id)
	if err != nil {
		return nil, err
	}
	nodes, err := a.NodeList(ctx)
	if err != nil {
		return nil, err
	}
	entry := d.Plan.Entry != nil && d.Plan.Entry.Service == svc.Name
	var out []orchestrator.Endpoint
	for _, t := range runningTasks(tasks, d.Version) {
		cid := t.Status.ContainerStatus.ContainerID
		node := nodes[t.NodeID]
		if h, _, err := a.health(ctx, svc, node.Description.Hostname, cid); err != nil || (h != "healthy" && h != "none") {
			continue
		}
		ep := orchestrator.Endpoint{Service: service, Instance: t.ID, Node: node.Description.Hostname}
		if entry {
			ep.Entry, ep.Address = orchestrator.EntryHostPort, hostAddr(node)
			for _, p := range t.Status.PortStatus.Ports {
				if p.TargetPort == uint32(d.Plan.Entry.Port) && p.PublishMode == swarm.PortConfigPublishModeHost {
					ep.Port = int(p.PublishedPort)
				}
			}
			if ep.Port == 0 {
				// seen after a manager's election: the new leader's task
				// record kept no port status, while the container still
				// publishes the port; its node's engine says which
				port, perr := a.containerHostPort(ctx, t, d.Plan.Entry.Port)
				if perr != nil {
					return nil, fmt.Errorf("swarm: job %s: task %s of %s publishes no host port for container port %d (port status %+v; %v)", d.Job, shortID(t.ID), service, d.Plan.Entry.Port, t.Status.PortStatus.Ports, perr)
				}
				ep.Port = port
			}
		} else {
			ep.Entry, ep.Port = orchestrator.EntryOverlay, svc.Port
			for _, na := range t.NetworksAttachments {
				if na.Network.ID == d.NetworkID && len(na.Addresses) > 0 {
					ep.Address = na.Addresses[0].Addr().String()
				}
			}
		}
		out = append(out, ep)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("swarm: job %s: no running, healthy task of service %s (version %s)", d.Job, service, d.Version)
	}
	return out, nil
}

// containerHostPort is the host port the task's container publishes for
// container port target, as the engine of its node reports it.
func (a *Engine) containerHostPort(ctx context.Context, t swarm.Task, target int) (int, error) {
	res, e, err := a.inspectTask(ctx, t)
	if err != nil {
		return 0, err
	}
	port, err := network.ParsePort(strconv.Itoa(target) + "/tcp")
	if err != nil {
		return 0, err
	}
	if ns := res.Container.NetworkSettings; ns != nil {
		for _, b := range ns.Ports[port] {
			if n, err := strconv.Atoi(b.HostPort); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("its container on node %s publishes none either", e.Name)
}

func (a *Engine) nodeNames(ctx context.Context) (map[string]string, error) {
	res, err := a.Client.NodeList(ctx, client.NodeListOptions{})
	if err != nil {
		return nil, fmt.Errorf("swarm: list nodes: %w", err)
	}
	out := map[string]string{}
	for _, n := range res.Items {
		out[n.ID] = n.Description.Hostname
	}
	return out, nil
}

// runningTask is one running Swarm task of the deployment: the neutral instance
// (whose ID is the task's, and whose Restarts counts the earlier tasks of
// the same slot since the last deploy, Swarm restarting a task by replacing
// its container) and where it runs.
type runningTask struct {
	orchestrator.Instance
	Service   string
	Slot      int
	NodeID    string
	Container string
	PID       int
}

// Instances lists the running tasks of the deployment's version.
func (a *Engine) Instances(ctx context.Context, d *deployment) ([]runningTask, error) {
	nodes, err := a.nodeNames(ctx)
	if err != nil {
		return nil, err
	}
	since := d.Started
	var out []runningTask
	for _, svc := range d.Plan.Services {
		id, err := a.serviceID(ctx, d, svc.Name)
		if err != nil {
			return nil, err
		}
		tasks, err := a.serviceTasks(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, t := range runningTasks(tasks, d.Version) {
			in := runningTask{Service: svc.Name, Slot: t.Slot, NodeID: t.NodeID, Container: t.Status.ContainerStatus.ContainerID,
				Instance: orchestrator.Instance{ID: t.ID, Group: svc.Group, Task: svc.Task, Node: nodes[t.NodeID], Driver: "docker", Image: t.Spec.ContainerSpec.Image, Declared: svc.Declared}}
			for _, o := range tasks {
				if o.Slot == t.Slot && o.ID != t.ID && o.CreatedAt.Before(t.CreatedAt) && !o.CreatedAt.Before(since) {
					in.Restarts++
				}
			}
			// the container's process is on the task's node, which the
			// manager's daemon does not see into: its probe finds it
			p, err := a.Nodes.Node(in.Node).ContainerProcess(ctx, in.Container)
			// a container that just exited has no process: Limits says so
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("swarm: job %s: container %s of task %s: %w", d.Job, shortID(in.Container), shortID(t.ID), err)
			}
			in.ImageID, in.PID = p.ImageID, p.PID
			out = append(out, in)
		}
	}
	return out, nil
}

// hostAddr is where a port published on the node is reached: the node's
// address in the swarm (127.0.0.1 on the embedded single-node swarm, which
// advertises loopback), loopback when the swarm does not say.
func hostAddr(n swarm.Node) string {
	if a := n.Status.Addr; a != "" && a != "0.0.0.0" {
		return a
	}
	return "127.0.0.1"
}

// ContainerPID is the PID of a task's container's init process on its node,
// as the node's probe finds it.
func (a *Engine) ContainerPID(ctx context.Context, taskID string) (int, error) {
	res, err := a.Client.TaskInspect(ctx, taskID, client.TaskInspectOptions{})
	if err != nil {
		return 0, fmt.Errorf("swarm: task %s: %w", shortID(taskID), err)
	}
	cs := res.Task.Status.ContainerStatus
	if cs == nil || cs.ContainerID == "" {
		return 0, fmt.Errorf("swarm: task %s has no container (state %s)", shortID(taskID), res.Task.Status.State)
	}
	nodes, err := a.nodeNames(ctx)
	if err != nil {
		return 0, err
	}
	p, err := a.Nodes.Node(nodes[res.Task.NodeID]).ContainerProcess(ctx, cs.ContainerID)
	if err != nil {
		return 0, fmt.Errorf("swarm: %w", err)
	}
	return p.PID, nil
}

// Limits reads every instance's cgroup limits on its node, through the
// node's probe (a.Nodes), which also found the PID.
func (a *Engine) Limits(ctx context.Context, d *deployment) ([]orchestrator.Limits, error) {
	ins, err := a.Instances(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.Limits
	for _, in := range ins {
		if in.PID == 0 {
			return nil, fmt.Errorf("swarm: job %s: task %s of %s has no running process", d.Job, shortID(in.ID), in.Service)
		}
		e, err := a.Nodes.Node(in.Node).Limits(ctx, in.PID)
		if err != nil {
			return nil, fmt.Errorf("swarm: job %s: limits of task %s of %s (pid %d): %w", d.Job, shortID(in.ID), in.Service, in.PID, err)
		}
		out = append(out, orchestrator.LimitsOf(in.Instance, e))
	}
	return out, nil
}

// Capacity is what the swarm's ready nodes offer, per node (the smallest's);
// MHzPerCore is this machine's (the manager the engine talks to), 0 when
// the kernel does not say.
func (a *Engine) Capacity(ctx context.Context) (orchestrator.Capacity, error) {
	res, err := a.Client.NodeList(ctx, client.NodeListOptions{})
	if err != nil {
		return orchestrator.Capacity{}, fmt.Errorf("swarm: list nodes: %w", err)
	}
	var c orchestrator.Capacity
	var managers []string
	for _, n := range res.Items {
		if n.ManagerStatus != nil && n.Status.State == swarm.NodeStateReady {
			managers = append(managers, n.ManagerStatus.Addr)
		}
		if n.Status.State != swarm.NodeStateReady || n.Spec.Availability != swarm.NodeAvailabilityActive {
			continue
		}
		cores := int(n.Description.Resources.NanoCPUs / 1e9)
		mib := int(n.Description.Resources.MemoryBytes >> 20)
		if c.Nodes == 0 || cores < c.Cores {
			c.Cores = cores
		}
		if c.Nodes == 0 || mib < c.MemoryMiB {
			c.MemoryMiB = mib
		}
		c.Nodes++
	}
	a.managers.noteManagers(managers)
	if c.Nodes == 0 {
		return c, fmt.Errorf("swarm: no ready, active node")
	}
	c.MHzPerCore = hostinfo.MHz()
	return c, nil
}

// Facts describes every node with the keys Nomad's fingerprint uses where
// the fact is the same (cpu.*, memory.totalbytes, kernel.*, os.*,
// driver.docker.version), so the parity of two orchestrators' runs compares
// like with like; swarm.version is the engine's, Swarm being part of it.
// The kernel and cgroup facts come from each ready node's own engine; the
// CPU model and OS are not the engine's to say: the sweep reads them on
// each node through its probe.
func (a *Engine) Facts(ctx context.Context) (orchestrator.Facts, error) {
	info, err := a.Client.Info(ctx, client.InfoOptions{})
	if err != nil {
		return nil, fmt.Errorf("swarm: docker info: %w", err)
	}
	res, err := a.Client.NodeList(ctx, client.NodeListOptions{})
	if err != nil {
		return nil, fmt.Errorf("swarm: list nodes: %w", err)
	}
	engines, err := a.engines().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("swarm: facts: %w", err)
	}
	out := orchestrator.Facts{}
	for _, e := range engines {
		if e.Client == a.Client {
			continue // the manager's info, read above
		}
		ni, err := e.Client.Info(ctx, client.InfoOptions{})
		if err != nil {
			return nil, fmt.Errorf("swarm: facts: docker info of node %s (engine %s): %w", e.Name, e.Host, err)
		}
		out[e.Name] = engineFacts(ni.Info.KernelVersion, ni.Info.CgroupVersion, ni.Info.CgroupDriver)
	}
	for _, n := range res.Items {
		f := map[string]string{
			"swarm.version":         n.Description.Engine.EngineVersion,
			"driver.docker.version": n.Description.Engine.EngineVersion,
			"kernel.name":           n.Description.Platform.OS,
			"cpu.arch":              n.Description.Platform.Architecture,
			"cpu.numcores":          strconv.FormatFloat(float64(n.Description.Resources.NanoCPUs)/1e9, 'f', -1, 64),
			"memory.totalbytes":     strconv.FormatInt(n.Description.Resources.MemoryBytes, 10),
		}
		if v, ok := n.Spec.Labels[placement.NodeLinkDelay]; ok {
			f[orchestrator.FactLinkDelay] = v
		}
		for k, v := range out[n.Description.Hostname] {
			f[k] = v
		}
		if n.ID == info.Info.Swarm.NodeID {
			for k, v := range engineFacts(info.Info.KernelVersion, info.Info.CgroupVersion, info.Info.CgroupDriver) {
				f[k] = v
			}
		}
		out[n.Description.Hostname] = f
	}
	return out, nil
}

// engineFacts are what a node's engine says of its kernel and cgroups.
func engineFacts(kernel, cgroupVersion, cgroupDriver string) map[string]string {
	return map[string]string{"kernel.version": kernel, "cgroup.version": cgroupVersion, "cgroup.driver": cgroupDriver}
}
