package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// binaries names the programs the stack runs.
type binaries struct {
	ferretdb, socialnet, redis, memcached string
	// postgresDir holds initdb and postgres, for the postgresql backend.
	postgresDir string
}

// stack is the social network with its datastores on loopback.
type stack struct {
	procs    []*proc // in start order
	frontend string  // base URL
}

// nobody is the account PostgreSQL runs as when this runs as root, which
// initdb and postgres refuse.
var nobody = &syscall.Credential{Uid: 65534, Gid: 65534}

// startStack starts redis, memcached, [postgres,] ferretdb and every
// socialnet service in one process, in dir.
func startStack(ctx context.Context, dir string, bin binaries, backend string) (*stack, error) {
	st := &stack{}
	ok := false
	defer func() {
		if !ok {
			st.stop()
		}
	}()
	ports := map[string]int{}
	for _, name := range []string{"redis", "memcached", "postgres", "ferretdb", "frontend"} {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[name] = port
	}
	addr := func(name string) string { return "127.0.0.1:" + strconv.Itoa(ports[name]) }
	launch := func(name string, cred *syscall.Credential, path string, args ...string) (*proc, error) {
		p, err := start(dir, name, cred, path, args...)
		if err != nil {
			return nil, err
		}
		st.procs = append(st.procs, p)
		return p, nil
	}

	if _, err := launch("redis", nil, bin.redis, "--bind", "127.0.0.1", "--port", strconv.Itoa(ports["redis"]),
		"--save", "", "--appendonly", "no"); err != nil {
		return nil, err
	}
	memcachedArgs := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(ports["memcached"]), "-U", "0", "-m", "1024"}
	if os.Geteuid() == 0 {
		memcachedArgs = append(memcachedArgs, "-u", "nobody")
	}
	if _, err := launch("memcached", nil, bin.memcached, memcachedArgs...); err != nil {
		return nil, err
	}

	ferretArgs := []string{"--listen-addr", addr("ferretdb")}
	switch backend {
	case "sqlite":
		ferretArgs = append(ferretArgs, "--data-dir", filepath.Join(dir, "ferretdb"))
	case "postgresql":
		pg, err := startPostgres(ctx, dir, bin.postgresDir, ports["postgres"], launch)
		if err != nil {
			return nil, err
		}
		pg.withChildren = true
		ferretArgs = append(ferretArgs, "--handler", "postgresql",
			"--postgresql-url", "postgres://ferretdb@"+addr("postgres")+"/ferretdb")
	default:
		return nil, fmt.Errorf("--backend %q: want sqlite or postgresql", backend)
	}
	if _, err := launch("ferretdb", nil, bin.ferretdb, ferretArgs...); err != nil {
		return nil, err
	}
	for _, name := range []string{"redis", "memcached", "ferretdb"} {
		if err := waitTCP(ctx, addr(name)); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if _, err := launch("socialnet", nil, bin.socialnet, "--service", "all", "--listen-addr", addr("frontend"),
		"--mongodb-uri", "mongodb://"+addr("ferretdb")+"/", "--memcached-addr", addr("memcached"),
		"--redis-addr", addr("redis"), "--log-level", "warn"); err != nil {
		return nil, err
	}
	if err := waitTCP(ctx, addr("frontend")); err != nil {
		return nil, fmt.Errorf("socialnet: %w", err)
	}
	st.frontend = "http://" + addr("frontend")
	ok = true
	return st, nil
}

// startPostgres makes a throwaway cluster with a trusted ferretdb role and
// database, and starts it with the settings the pack gives it.
func startPostgres(ctx context.Context, dir, binDir string, port int,
	launch func(string, *syscall.Credential, string, ...string) (*proc, error)) (*proc, error) {
	if binDir == "" {
		return nil, fmt.Errorf("--backend postgresql needs --postgres-bin")
	}
	var cred *syscall.Credential
	data := filepath.Join(dir, "postgres")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		cred = nobody
		for _, path := range []string{dir, data} {
			if err := os.Chown(path, int(nobody.Uid), int(nobody.Gid)); err != nil {
				return nil, err
			}
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), "-D", data, "-U", "ferretdb", "--auth=trust", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// The database FerretDB connects to, made in single-user mode: no
	// client program is needed.
	single := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "--single", "-D", data, "postgres")
	single.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	single.Stdin = strings.NewReader("CREATE DATABASE ferretdb;\n")
	if out, err := single.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("create database: %w\n%s", err, out)
	}
	pg, err := launch("postgres", cred, filepath.Join(binDir, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-k", dir, "-c", "max_connections=200",
		"-c", "shared_buffers=256MB", "-c", "synchronous_commit=off")
	if err != nil {
		return nil, err
	}
	if err := waitTCP(ctx, "127.0.0.1:"+strconv.Itoa(port)); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return pg, nil
}

// stop ends the processes, the front end first.
func (st *stack) stop() {
	for i := len(st.procs) - 1; i >= 0; i-- {
		st.procs[i].stop(10 * time.Second)
	}
}

// cpu returns every process's CPU seconds so far, by name.
func (st *stack) cpu() (map[string]float64, error) {
	out := map[string]float64{}
	for _, p := range st.procs {
		seconds, err := p.cpuSeconds()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		out[p.name] = seconds
	}
	return out, nil
}
