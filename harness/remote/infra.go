package remote

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// On every host the infrastructure jobs run from /opt/orchbench, laid out
// as a checkout is (.tools/bin, dashboards, cluster/otelcol), so that the
// same levant templates render for it as for the embedded cluster with
// root = /opt/orchbench (cluster/jobs.sh JOBS_ROOT).
const (
	remoteRoot     = "/opt/orchbench"
	probeTokenPath = "/etc/orchbench/probe.token"
	probePort      = "7070"
	// the files the jobs read their secrets from, root's only
	sinkPasswordPath  = "/etc/orchbench/sink.password"
	nomadMetricsPath  = "/etc/orchbench/nomad-metrics.token"
	consulMetricsPath = "/etc/orchbench/consul-metrics.token"
	agentRemoteConfig = "/etc/orchbench/agent-remote.yaml"
	vmPort, vlPort    = "8428", "9428"
)

// agentRemoteYAML is merged over cluster/otelcol/agent.yaml on a remote
// cluster's hosts: the sinks are HTTPS under the Docker CA and want the
// password. The readers list is replaced whole (lists do not merge).
func agentRemoteYAML(auth string) string {
	return fmt.Sprintf(`# written by orchbench remote up
exporters:
  otlphttp/victorialogs:
    headers:
      Authorization: %[1]q
    tls:
      ca_file: %[2]s/ca.pem
  otlphttp/victoriametrics:
    headers:
      Authorization: %[1]q
    tls:
      ca_file: %[2]s/ca.pem
service:
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: ${env:OTELCOL_METRICS_HOST}
                port: ${env:OTELCOL_METRICS_PORT}
        - periodic:
            interval: 10000
            exporter:
              otlp:
                protocol: http/protobuf
                endpoint: ${env:VICTORIAMETRICS_URL}/opentelemetry/v1/metrics
                certificate: %[2]s/ca.pem
                headers:
                  - name: Authorization
                    value: %[1]q
`, auth, dockerTLSDir)
}

func (u *upper) sinkAuth() string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte("orchbench:"+u.secrets.SinkPassword))
}

// readAll reads local files into host files at the remote paths given.
func readAll(m map[string]string, mode os.FileMode) (map[string]hostFile, error) {
	out := map[string]hostFile{}
	for remote, local := range m {
		b, err := os.ReadFile(local)
		if err != nil {
			return nil, err
		}
		out[remote] = hostFile{b, mode}
	}
	return out, nil
}

// infraFiles are what the jobs of a host need: on every Nomad client the
// node probe and the node agent, on the client host VictoriaMetrics and
// VictoriaLogs too.
func (u *upper) infraFiles(h Host) (map[string]hostFile, error) {
	bin := func(name string) string { return filepath.Join(u.opts.Bin, name) }
	files, err := readAll(map[string]string{
		remoteRoot + "/.tools/bin/orchbench":         u.opts.Orchbench,
		remoteRoot + "/.tools/bin/otelcol-orchbench": bin("otelcol-orchbench"),
	}, 0o755)
	if err != nil {
		return nil, err
	}
	conf, err := readAll(map[string]string{remoteRoot + "/cluster/otelcol/agent.yaml": filepath.Join(u.opts.Root, "cluster", "otelcol", "agent.yaml")}, 0o644)
	if err != nil {
		return nil, err
	}
	files[remoteRoot+"/cluster/otelcol/agent.yaml"] = conf[remoteRoot+"/cluster/otelcol/agent.yaml"]
	files[probeTokenPath] = hostFile{[]byte(u.secrets.Probe + "\n"), 0o600}
	files[nomadMetricsPath] = hostFile{[]byte(u.secrets.NomadMetrics + "\n"), 0o600}
	files[agentRemoteConfig] = hostFile{[]byte(agentRemoteYAML(u.sinkAuth())), 0o600}
	if h.Role != RoleClient {
		return files, nil
	}
	more, err := readAll(map[string]string{
		remoteRoot + "/.tools/bin/victoria-metrics": bin("victoria-metrics"),
		remoteRoot + "/.tools/bin/victoria-logs":    bin("victoria-logs"),
	}, 0o755)
	if err != nil {
		return nil, err
	}
	dashboards, _ := filepath.Glob(filepath.Join(u.opts.Root, "dashboards", "*.json"))
	for _, d := range dashboards {
		b, err := os.ReadFile(d)
		if err != nil {
			return nil, err
		}
		more[remoteRoot+"/dashboards/"+filepath.Base(d)] = hostFile{b, 0o644}
	}
	certs, err := readAll(map[string]string{
		"/etc/orchbench/consul-metrics.pem":     u.consulPKI.Cert(MetricsCertName),
		"/etc/orchbench/consul-metrics-key.pem": u.consulPKI.Key(MetricsCertName),
	}, 0o600)
	if err != nil {
		return nil, err
	}
	for k, v := range certs {
		more[k] = v
	}
	more[sinkPasswordPath] = hostFile{[]byte(u.secrets.SinkPassword), 0o600}
	more[consulMetricsPath] = hostFile{[]byte(u.secrets.ConsulMetrics + "\n"), 0o600}
	for k, v := range more {
		files[k] = v
	}
	return files, nil
}

// jobsVars is the variable file cluster/jobs.sh reads last for this
// cluster: its datacenter, the probe with its token, and the remote block
// of jobs/cluster.vars.yml. node_probe is given whole: levant replaces a
// map, it does not merge one.
func (u *upper) jobsVars() string {
	client := u.inv.Clients()[0]
	return fmt.Sprintf(`# written by orchbench remote up for %s
datacenter: %s
node_probe:
  port: %s
  token_file: %s
  cpu_mhz: 50
  memory_mib: 64
remote:
  enabled: true
  address: %s
  tls_cert: %s/cert.pem
  tls_key: %s/key.pem
  password_file: %s
  nomad_ca: %s/ca.pem
  nomad_token_file: %s
  nomad_data_dir: /opt/nomad
  consul_ca: %s/ca.pem
  consul_cert: /etc/orchbench/consul-metrics.pem
  consul_key: /etc/orchbench/consul-metrics-key.pem
  consul_token_file: %s
  agent_config: %s
`, u.inv.Path, u.inv.Datacenter, probePort, probeTokenPath, client.Address, dockerTLSDir, dockerTLSDir,
		sinkPasswordPath, nomadConfigDir, nomadMetricsPath, consulConfigDir, consulMetricsPath, agentRemoteConfig)
}

// deployInfra copies what the infrastructure jobs need onto the hosts and
// runs them with levant (cluster/jobs.sh), as the embedded cluster does:
// the node probe and the node agent on every Nomad client, VictoriaMetrics
// and VictoriaLogs on the client host; then waits until each answers.
func (u *upper) deployInfra(ctx context.Context, nomadEnv []string) error {
	clients := append(append([]Host{}, u.inv.Workers()...), u.inv.Clients()...)
	if err := eachHost(clients, func(h Host) error {
		files, err := u.infraFiles(h)
		if err != nil {
			return err
		}
		c, err := Dial(ctx, h, u.known, dialTimeout)
		if err != nil {
			return &HostError{Host: h, Step: "infrastructure", Err: err}
		}
		defer c.Close()
		changed, _, err := syncFiles(c, "nomad", files)
		if err != nil {
			return &HostError{Host: h, Step: "infrastructure", Err: err}
		}
		if changed {
			u.report(h, "infra", "programs, configuration and tokens copied to "+remoteRoot+" and /etc/orchbench")
		}
		return nil
	}); err != nil {
		return err
	}
	vars := filepath.Join(u.inv.StateDir, "jobs.vars.yml")
	if err := os.WriteFile(vars, []byte(u.jobsVars()), 0o600); err != nil {
		return err
	}
	probeSum, err := fileSum(u.opts.Orchbench)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(u.opts.Root, "cluster", "jobs.sh"), "deploy", "node-probe", "victoriametrics", "victorialogs", "agent")
	cmd.Env = append(append(os.Environ(), nomadEnv...),
		"JOBS_ROOT="+remoteRoot, "JOBS_VAR_FILE="+vars,
		"NODE_PROBE_BIN="+remoteRoot+"/.tools/bin/orchbench", "NODE_PROBE_SUM="+probeSum[:12])
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("infrastructure jobs: cluster/jobs.sh deploy: %w\n%s", err, lastLines(out.String(), 8))
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	if err := eachHost(clients, func(h Host) error {
		url := "http://" + net.JoinHostPort(h.Address, probePort) + "/v1/identity"
		if err := waitFor(ctx, 60*time.Second, "node probe", func() error {
			// any answer is a probe up: a request naming no task is refused
			resp, err := hc.Post(url, "application/json", strings.NewReader("{}"))
			if err != nil {
				return err
			}
			resp.Body.Close()
			return nil
		}); err != nil {
			return &HostError{Host: h, Step: "probe", Err: fmt.Errorf("%w (nomad job status node-probe)", err)}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := u.waitAgents(ctx, clients); err != nil {
		return err
	}
	// VictoriaMetrics and VictoriaLogs: TLS under the Docker CA, the password
	tls, err := u.docker.httpClient()
	if err != nil {
		return err
	}
	client := u.inv.Clients()[0]
	for _, sink := range []struct{ name, port, path string }{{"VictoriaMetrics", vmPort, "/api/v1/status/tsdb"}, {"VictoriaLogs", vlPort, "/select/logsql/stats_query?query=*+|+stats+count()"}} {
		url := "https://" + net.JoinHostPort(client.Address, sink.port) + sink.path
		if err := waitFor(ctx, 90*time.Second, sink.name, func() error {
			req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			req.SetBasicAuth("orchbench", u.secrets.SinkPassword)
			resp, err := tls.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("%s", resp.Status)
			}
			return nil
		}); err != nil {
			return &HostError{Host: client, Step: sink.name, Err: fmt.Errorf("%w (nomad job status %s)", err, strings.ToLower(sink.name))}
		}
	}
	return nil
}

// waitAgents waits until the node agent runs on every Nomad client host:
// levant does not follow a system job's allocations, and an agent that
// fails to start would leave every step's shipping gate failing.
func (u *upper) waitAgents(ctx context.Context, clients []Host) error {
	type alloc struct {
		NodeName, ClientStatus string
		TaskStates             map[string]struct {
			State  string
			Events []struct{ DisplayMessage string }
		}
	}
	var last []alloc
	err := waitFor(ctx, 90*time.Second, "node agents", func() error {
		if err := u.nomadAPI.do(ctx, "GET", "/v1/job/orchbench-agent/allocations", nil, &last); err != nil {
			return err
		}
		running := map[string]bool{}
		for _, a := range last {
			if a.ClientStatus == "running" {
				running[a.NodeName] = true
			}
		}
		for _, h := range clients {
			if !running[h.Name] {
				return fmt.Errorf("not running on %s", h.Name)
			}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	// name each host whose agent is not running, with its task's last event
	var why []string
	for _, a := range last {
		if a.ClientStatus == "running" {
			continue
		}
		for _, ts := range a.TaskStates {
			msg := ""
			if n := len(ts.Events); n > 0 {
				msg = ts.Events[n-1].DisplayMessage
			}
			why = append(why, fmt.Sprintf("%s: %s, %s", a.NodeName, a.ClientStatus, msg))
		}
	}
	return fmt.Errorf("node agent (nomad job status orchbench-agent; nomad alloc logs -stderr ALLOC): %w; %s", err, strings.Join(why, "; "))
}
