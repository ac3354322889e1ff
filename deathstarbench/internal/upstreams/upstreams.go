// Package upstreams keeps a DeathStarBench service process pointed at its
// upstreams and stores as the orchestrator renders their addresses.
package upstreams

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The Nomad pack renders a service's upstream addresses from Consul into an
// env file, with a placeholder for an upstream not registered yet, and asks
// Nomad to restart the task when the file changes. Nomad reads the file's
// environment when the task starts; when the file changes between its
// first render and the start, the task runs with the placeholder and is not
// restarted: seen on a loaded machine, four social network services
// answered every call with "server selection timeout … 127.0.0.1:1" while
// their health checks passed. So the process watches the file itself: an
// upstream service's new addresses are taken in place (its Thrift clients
// re-pointed), and any other changed value (a store's address) makes it
// execute itself again with the file's values (same PID and ports; no
// restart counted).

// PollInterval is how often the file is read: a second at most
// between a late render and the service using it.
const PollInterval = time.Second

// staleUpstreams returns the variables of envFile whose values differ from
// env's (KEY=VALUE lines; blank lines and # comments skipped), sorted.
func staleUpstreams(envFile []byte, getenv func(string) string) (map[string]string, []string) {
	values := map[string]string{}
	var stale []string
	scanner := bufio.NewScanner(bytes.NewReader(envFile))
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || key == "" {
			continue
		}
		values[key] = value
		if getenv(key) != value {
			stale = append(stale, key)
		}
	}
	slices.Sort(stale)
	return values, stale
}

// withValues is environ with each of values' variables set to its value.
func withValues(environ []string, values map[string]string) []string {
	out := make([]string, 0, len(environ)+len(values))
	for _, kv := range environ {
		key, _, _ := strings.Cut(kv, "=")
		if _, replaced := values[key]; !replaced {
			out = append(out, kv)
		}
	}
	for key, value := range values {
		out = append(out, key+"="+value)
	}
	return out
}

// Watch polls path until ctx ends. A variable of the file whose
// value changed since the process started (or since it was last applied)
// goes to apply, which takes an upstream service's new addresses in place
// (true) or cannot (false: a store's address, read once at start); when
// any change cannot be applied, restart is called with the environment to
// start again with. The pack's template changes nothing on its own
// (change_mode noop): a moved replica then costs its callers no restart,
// where Nomad restarting every caller of it took the front end down after
// a kill-node. Nomad renders the file before the task starts, so a file
// missing at the start means the orchestrator renders none (the Swarm and
// Kubernetes translations give DNS names, which do not change): nothing to
// watch.
func Watch(ctx context.Context, path string, every time.Duration, logger *slog.Logger, apply func(key, value string) bool, restart func(env []string) error) error {
	if _, err := os.Stat(path); err != nil {
		logger.Info("no upstreams file to watch", "file", path, "error", err)
		return nil
	}
	applied := map[string]string{}
	current := func(key string) string {
		if v, ok := applied[key]; ok {
			return v
		}
		return os.Getenv(key)
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		if data, err := os.ReadFile(path); err == nil {
			values, stale := staleUpstreams(data, current)
			var unapplied []string
			for _, key := range stale {
				if apply != nil && apply(key, values[key]) {
					applied[key] = values[key]
					logger.Info("upstream addresses changed; calling them from now on", "variable", key, "addresses", values[key])
				} else {
					unapplied = append(unapplied, key)
				}
			}
			if len(unapplied) > 0 {
				logger.Warn("addresses changed that this process reads only at start; starting again with them", "file", path, "variables", strings.Join(unapplied, ","))
				return restart(withValues(os.Environ(), values))
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// ExecSelf replaces the process with a fresh run of the same binary and
// arguments under env. Its sockets close on exec, so the new run binds the
// same addresses again.
func ExecSelf(env []string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	return syscall.Exec(exe, os.Args, env)
}
