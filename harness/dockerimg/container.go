package dockerimg

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// RunSpec is a container on the host network with no resource limits: a
// helper the harness runs itself, reachable on loopback like any process.
type RunSpec struct {
	// Name is unique on the daemon; a container of that name left by an
	// earlier run is removed first.
	Name  string
	Image string
	Args  []string
	Env   []string
	// Binds are host:container mounts.
	Binds  []string
	Labels map[string]string
}

// Container is one the harness started.
type Container struct {
	c    *client.Client
	ID   string
	Name string
}

// Run creates and starts the container.
func Run(ctx context.Context, c *client.Client, spec RunSpec) (*Container, error) {
	if err := removeByName(ctx, c, spec.Name); err != nil {
		return nil, err
	}
	created, err := c.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:       spec.Name,
		Config:     &container.Config{Image: spec.Image, Cmd: spec.Args, Env: spec.Env, Labels: spec.Labels},
		HostConfig: &container.HostConfig{NetworkMode: "host", Binds: spec.Binds},
	})
	if err != nil {
		return nil, fmt.Errorf("create container %s (%s): %w", spec.Name, spec.Image, err)
	}
	ct := &Container{c: c, ID: created.ID, Name: spec.Name}
	if _, err := c.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		ct.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("start container %s: %w", spec.Name, err)
	}
	return ct, nil
}

func removeByName(ctx context.Context, c *client.Client, name string) error {
	_, err := c.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove the leftover container %s: %w", name, err)
	}
	return nil
}

// Stop sends SIGTERM, waits up to grace for the exit (SIGKILL after), and
// returns the exit code: a store that exits cleanly has flushed its files.
func (ct *Container) Stop(ctx context.Context, grace time.Duration) (int64, error) {
	secs := int(grace.Seconds())
	if _, err := ct.c.ContainerStop(ctx, ct.ID, client.ContainerStopOptions{Timeout: &secs}); err != nil {
		return -1, fmt.Errorf("stop %s: %w", ct.Name, err)
	}
	return ct.Wait(ctx)
}

// Wait waits for the container to exit and returns its exit code.
func (ct *Container) Wait(ctx context.Context) (int64, error) {
	w := ct.c.ContainerWait(ctx, ct.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case res := <-w.Result:
		return res.StatusCode, nil
	case err := <-w.Error:
		return -1, fmt.Errorf("wait for %s: %w", ct.Name, err)
	}
}

// Running reports whether the container is still up, for telling a store
// that crashed from one that is slow.
func (ct *Container) Running(ctx context.Context) (bool, error) {
	res, err := ct.c.ContainerInspect(ctx, ct.ID, client.ContainerInspectOptions{})
	if err != nil {
		return false, err
	}
	return res.Container.State != nil && res.Container.State.Running, nil
}

// Logs returns the last lines of the container's output, for an error
// message.
func (ct *Container) Logs(ctx context.Context, lines int) string {
	res, err := ct.c.ContainerLogs(ctx, ct.ID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: fmt.Sprint(lines)})
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer res.Close()
	raw, _ := io.ReadAll(res)
	return strings.TrimSpace(demux(raw))
}

// demux strips the 8-byte frame headers Docker puts before each chunk of a
// container's output when it has no terminal.
func demux(raw []byte) string {
	var b strings.Builder
	for len(raw) >= 8 && raw[0] <= 2 && raw[1] == 0 && raw[2] == 0 && raw[3] == 0 {
		n := int(raw[4])<<24 | int(raw[5])<<16 | int(raw[6])<<8 | int(raw[7])
		raw = raw[8:]
		n = min(n, len(raw))
		b.Write(raw[:n])
		raw = raw[n:]
	}
	b.Write(raw)
	return b.String()
}

// Remove removes the container, running or not.
func (ct *Container) Remove(ctx context.Context) error {
	return removeByName(ctx, ct.c, ct.Name)
}
