package snapshot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/moby/moby/client"

	"github.com/orchbench/orchbench/harness/dockerimg"
)

// stack is the social network run for loading a snapshot: FerretDB, Redis,
// memcached and every service in one socialnet process (--service all),
// each a container of the deployment's own image on the host network,
// bound to loopback, without CPU or memory limits. FerretDB and Redis write
// into their dataDirs, bind-mounted from the host; memcached's is where its
// dump goes.
type stack struct {
	docker        *client.Client
	work          string
	dataDirs      map[Store]string
	containers    map[string]*dockerimg.Container
	redisAddr     string
	memcachedAddr string
	frontend      string
}

// stackStartTimeout bounds how long the stores and services get to listen.
const stackStartTimeout = 60 * time.Second

// loadRPCCallTimeout bounds each Thrift call while loading. Nothing is measured
// here, and with the loader's requests in flight on two cores a compose's
// user-timeline write (one author's MongoDB document, one write at a time)
// queued past 10 s, and may queue past the services' default 30 s; a failed
// compose would leave the snapshot short of posts.
const loadRPCCallTimeout = 2 * time.Minute

// containerLabel marks the containers of snapshot making, for `docker ps`.
const containerLabel = "orchbench.snapshot"

// startStack starts the containers; stop (or remove, on failure) ends them.
func startStack(ctx context.Context, docker *client.Client, images baseImages, key, workParent string) (*stack, error) {
	work, err := os.MkdirTemp(workParent, ".work-"+key+"-")
	if err != nil {
		return nil, err
	}
	s := &stack{docker: docker, work: work, dataDirs: map[Store]string{}, containers: map[string]*dockerimg.Container{}}
	// Redis runs as nobody; the mount point must let it in
	if err := os.Chmod(work, 0o755); err != nil {
		return s, err
	}
	for _, st := range Stores {
		dir := filepath.Join(work, string(st))
		if err := os.Mkdir(dir, 0o777); err != nil {
			return s, err
		}
		if err := os.Chmod(dir, 0o777); err != nil { // past the umask
			return s, err
		}
		s.dataDirs[st] = dir
	}
	ports, err := freePorts(4)
	if err != nil {
		return s, err
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	ferretAddr, frontendAddr := addr(0), addr(3)
	s.redisAddr, s.memcachedAddr, s.frontend = addr(1), addr(2), "http://"+addr(3)
	bind := []string{work + ":/data"}
	specs := []dockerimg.RunSpec{
		{Name: "ferretdb", Image: images.ferretdb, Binds: bind,
			Args: []string{"--listen-addr", ferretAddr, "--data-dir", "/data/" + string(StoreFerretDB)}},
		// the pack's persistence flags (packs/social-network), no maxmemory: nothing may be evicted
		{Name: "redis", Image: images.redis, Binds: bind,
			Args: []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(ports[1]), "--dir", "/data/" + string(StoreRedis),
				"--appendonly", "yes", "--appendfsync", "everysec", "--maxmemory-policy", "noeviction"}},
		{Name: "memcached", Image: images.memcached, Args: []string{"-l", "127.0.0.1", "-p", strconv.Itoa(ports[2]), "-U", "0", "-m", "512"}},
	}
	for i, spec := range specs {
		spec.Name = "orchbench-snapshot-" + key + "-" + spec.Name
		spec.Labels = map[string]string{containerLabel: key}
		c, err := dockerimg.Run(ctx, docker, spec)
		if err != nil {
			return s, err
		}
		s.containers[specs[i].Name] = c
	}
	for name, a := range map[string]string{"ferretdb": ferretAddr, "redis": s.redisAddr, "memcached": s.memcachedAddr} {
		if err := s.waitListening(ctx, name, a); err != nil {
			return s, err
		}
	}
	c, err := dockerimg.Run(ctx, docker, dockerimg.RunSpec{
		Name: "orchbench-snapshot-" + key + "-socialnet", Image: images.socialnet, Labels: map[string]string{containerLabel: key},
		Args: []string{"--service", "all", "--listen-addr", frontendAddr},
		Env: []string{"MONGODB_URI=mongodb://" + ferretAddr + "/", "MEMCACHED_ADDR=" + s.memcachedAddr, "REDIS_ADDR=" + s.redisAddr,
			"JWT_SECRET=orchbench-snapshot", "LOG_LEVEL=warn", "RPC_CALL_TIMEOUT=" + loadRPCCallTimeout.String()},
	})
	if err != nil {
		return s, err
	}
	s.containers["socialnet"] = c
	return s, s.waitHealthy(ctx)
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitListening waits until name accepts connections; a container that
// exited fails at once, with its last log lines.
func (s *stack) waitListening(ctx context.Context, name, addr string) error {
	deadline := time.Now().Add(stackStartTimeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if err := s.alive(ctx, name); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not listen on %s within %s: %s", name, addr, stackStartTimeout, s.containers[name].Logs(ctx, 20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitHealthy waits for the front end's /healthz.
func (s *stack) waitHealthy(ctx context.Context) error {
	deadline := time.Now().Add(stackStartTimeout)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := hc.Get(s.frontend + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := s.alive(ctx, "socialnet"); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the front end at %s was not healthy within %s: %v", s.frontend, stackStartTimeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// alive fails when the container has exited.
func (s *stack) alive(ctx context.Context, name string) error {
	c := s.containers[name]
	running, err := c.Running(ctx)
	if err != nil {
		return err
	}
	if !running {
		return fmt.Errorf("%s exited: %s", name, c.Logs(ctx, 20))
	}
	return nil
}

// stopClean stops a container with SIGTERM and requires a clean exit: a
// store that exits non-zero may not have flushed its files.
func (s *stack) stopClean(ctx context.Context, name string, grace time.Duration) error {
	c := s.containers[name]
	code, err := c.Stop(ctx, grace)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("%s exited with status %d when stopped: %s", name, code, c.Logs(ctx, 20))
	}
	return nil
}

// remove removes every container and the work dir, whatever happened.
func (s *stack) remove(ctx context.Context) error {
	var errs []error
	for _, c := range s.containers {
		errs = append(errs, c.Remove(ctx))
	}
	errs = append(errs, os.RemoveAll(s.work))
	return errors.Join(errs...)
}
