//go:build remote

// Package remote tests `orchbench remote` end to end on emulated hosts
// (cluster/hosts.sh): containers of plain Debian with systemd and sshd, on
// which everything is installed over SSH as on a user's own machines.
//
//	HOSTS_NAME=obhci HOSTS_SUBNET=10.87.0.0/24 go test -tags remote -count=1 -timeout 30m -v ./test/remote/
package remote

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var images = []string{"orchbench/taewa:local", "orchbench/orchbench:local", "orchbench/pause:local"}

func TestMain(m *testing.M) {
	// a run killed half-way leaves its hosts (and their secrets, in the
	// hosts' state directory): these tests' hosts are theirs alone
	if out, err := script("hosts.sh", "down"); err != nil {
		os.Stderr.WriteString("hosts.sh down: " + err.Error() + "\n" + out)
		os.Exit(1)
	}
	code := m.Run()
	// the hosts are shared by the tests of this file: down once, at the end
	if out, err := script("hosts.sh", "down"); err != nil {
		os.Stderr.WriteString("hosts.sh down: " + err.Error() + "\n" + out)
		code = 1
	}
	os.Exit(code)
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func script(name string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(repoRoot(), "cluster", name), args...)
	cmd.Dir = repoRoot()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// orchbench builds the CLI once into a temporary directory.
var builtBin string

func orchbench(t *testing.T) string {
	t.Helper()
	if builtBin != "" {
		return builtBin
	}
	dir, err := os.MkdirTemp("", "orchbench-remote-test-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "orchbench")
	cmd := exec.Command("go", "build", "-o", bin, "./harness/cmd/orchbench")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	builtBin = bin
	return bin
}

func versions(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "cluster", "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CONSUL_VERSION="); ok {
			args = append(args, "--consul-version", v)
		}
		if v, ok := strings.CutPrefix(line, "NOMAD_VERSION="); ok {
			args = append(args, "--nomad-version", v)
		}
	}
	return args
}

// remoteCmd runs `orchbench remote ARGS -i inventory` from the checkout.
func remoteCmd(t *testing.T, inventory string, env []string, args ...string) (string, error) {
	t.Helper()
	full := append(append([]string{"remote"}, args...), "-i", inventory, "--bin", filepath.Join(repoRoot(), ".tools", "bin"))
	if args[0] == "up" {
		full = append(full, versions(t)...)
		full = append(full, "--orchbench", orchbench(t))
	}
	cmd := exec.Command(orchbench(t), full...)
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// hostsUp brings the emulated hosts up (or finds them up) and returns the inventory.
func hostsUp(t *testing.T) string {
	t.Helper()
	began := time.Now()
	if out, err := script("hosts.sh", "up", "hosts=5", "servers=3"); err != nil {
		t.Fatalf("hosts.sh up: %v\n%s", err, out)
	}
	t.Logf("figure: hosts.sh up 5 3 in %.1f s", time.Since(began).Seconds())
	out, err := script("hosts.sh", "inventory")
	if err != nil {
		t.Fatalf("hosts.sh inventory: %v\n%s", err, out)
	}
	return strings.TrimSpace(out)
}

func hostNames(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "--filter", "label=orchbench.hosts="+hostsName(), "--format", "{{.Names}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}

func hostsName() string {
	if n := os.Getenv("HOSTS_NAME"); n != "" {
		return n
	}
	return "obh"
}

// onHost runs a shell command inside an emulated host (the test's view
// from outside; remote up itself only ever uses SSH).
func onHost(host, command string) (string, error) {
	out, err := exec.Command("docker", "exec", host, "sh", "-c", command).CombinedOutput()
	return string(out), err
}

// untouched fails when anything remote up installs is on a host.
func untouched(t *testing.T, host string) {
	t.Helper()
	out, _ := onHost(host, "ls -d /usr/local/bin/consul /usr/local/bin/nomad /etc/consul.d /etc/nomad.d /etc/docker /opt/orchbench /usr/sbin/dockerd 2>/dev/null")
	if strings.TrimSpace(out) != "" {
		t.Errorf("%s was changed: %s", host, strings.Join(strings.Fields(out), " "))
	}
}

// A wrong key for one host stops remote up in its preflight: the error
// names that host and what failed, and no host, the good ones included,
// has anything installed. A malformed inventory names its file and line.
func TestRemoteWrongKeyChangesNothing(t *testing.T) {
	inv := hostsUp(t)
	src, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wrongKey := filepath.Join(dir, "wrong_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", wrongKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	victim := hostsName() + "-worker1"
	wrong := strings.Replace(string(src), `host "`+victim+`" {`, `host "`+victim+`" {`+"\n  key = \""+wrongKey+"\"", 1)
	if wrong == string(src) {
		t.Fatalf("no host block %s in %s", victim, inv)
	}
	wrongInv := filepath.Join(dir, "wrong-key.hcl")
	if err := os.WriteFile(wrongInv, []byte(wrong), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := remoteCmd(t, wrongInv, nil, "up")
	t.Logf("remote up with a wrong key for %s:\n%s", victim, out)
	if err == nil {
		t.Fatal("remote up succeeded with a wrong key")
	}
	for _, want := range []string{"nothing was changed on any host", "host " + victim, "was refused with key " + wrongKey} {
		if !strings.Contains(out, want) {
			t.Errorf("the error does not say %q", want)
		}
	}
	if n := strings.Count(out, "host "+hostsName()+"-"); n != 1 {
		t.Errorf("the error names %d hosts; only %s is wrong", n, victim)
	}
	for _, h := range hostNames(t) {
		untouched(t, h)
	}

	bad := filepath.Join(dir, "bad.hcl")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(src), `role    = "client"`, `role    = "clinet"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = remoteCmd(t, bad, nil, "up")
	if err == nil || !regexp.MustCompile(regexp.QuoteMeta(bad)+`:\d+,\d+-\d+: host \S+: unknown role "clinet"`).MatchString(out) {
		t.Errorf("a misspelt role: want an error naming %s, its line and the role; got %v:\n%s", bad, err, out)
	}
}

// The acceptance of issue 25 on emulated hosts: remote up with TLS and
// ACLs, 3 Nomad servers, a second run that changes nothing, anonymous
// requests refused, the secrets 0600, a sweep on Nomad and Swarm with
// every gate valid and limits read through the node probes, down.
func TestRemoteUpSweepDown(t *testing.T) {
	inv := hostsUp(t)
	began := time.Now()
	out, err := remoteCmd(t, inv, nil, "up")
	t.Logf("remote up in %.1f s:\n%s", time.Since(began).Seconds(), out)
	if err != nil {
		t.Fatalf("remote up: %v", err)
	}
	t.Logf("figure: remote up of 5 hosts in %.1f s", time.Since(began).Seconds())
	for _, h := range hostNames(t) {
		for _, want := range []string{h + " +consul +installed", h + " +nomad +installed", h + " +docker +installed"} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("remote up did not report %q", want)
			}
		}
	}
	began = time.Now()
	out, err = remoteCmd(t, inv, nil, "up")
	t.Logf("second remote up in %.1f s:\n%s", time.Since(began).Seconds(), out)
	if err != nil || !strings.Contains(out, "no change: every host was as the inventory says") {
		t.Fatalf("a second remote up changed something (or failed: %v)", err)
	}

	// drift on one host (a hand edit) is put back, and only there
	drifted := hostsName() + "-worker1"
	if out, err := onHost(drifted, "echo '# edited by hand' >>/etc/nomad.d/nomad.hcl"); err != nil {
		t.Fatalf("editing %s: %v %s", drifted, err, out)
	}
	out, err = remoteCmd(t, inv, nil, "up")
	t.Logf("remote up after a hand edit on %s:\n%s", drifted, out)
	if err != nil || !regexp.MustCompile(drifted+` +nomad +configuration written, restarted`).MatchString(out) || strings.Count(out, "configuration written") != 1 {
		t.Errorf("the hand edit on %s was not put back there alone (%v)", drifted, err)
	}
	if out, _ := onHost(drifted, "grep -c 'edited by hand' /etc/nomad.d/nomad.hcl"); strings.TrimSpace(out) != "0" {
		t.Errorf("%s keeps the hand edit", drifted)
	}

	envOut, err := remoteCmd(t, inv, nil, "env")
	if err != nil {
		t.Fatalf("remote env: %v\n%s", err, envOut)
	}
	env := exports(envOut)
	checkSecurity(t, env)

	nomad := exec.Command(filepath.Join(repoRoot(), ".tools", "bin", "nomad"), "server", "members")
	nomad.Env = append(os.Environ(), envList(env)...)
	members, err := nomad.CombinedOutput()
	if err != nil || strings.Count(string(members), " alive ") != 3 {
		t.Errorf("nomad server members: want 3 alive servers (%v):\n%s", err, members)
	}
	status := exec.Command(filepath.Join(repoRoot(), "cluster", "remote-status.sh"))
	status.Env = append(os.Environ(), envList(env)...)
	if out, err := status.CombinedOutput(); err != nil {
		t.Errorf("cluster/remote-status.sh: %v\n%s", err, out)
	}

	began = time.Now()
	if out, err := remoteCmd(t, inv, nil, append([]string{"images"}, images...)...); err != nil {
		t.Fatalf("remote images: %v\n%s", err, out)
	}
	t.Logf("figure: remote images of %d images in %.1f s", len(images), time.Since(began).Seconds())
	sweepOnRemote(t, env)

	began = time.Now()
	out, err = remoteCmd(t, inv, nil, "down")
	t.Logf("remote down in %.1f s:\n%s", time.Since(began).Seconds(), out)
	if err != nil {
		t.Fatalf("remote down: %v", err)
	}
	for _, h := range hostNames(t) {
		untouched(t, h)
		if out, _ := onHost(h, "systemctl list-units --no-legend 'nomad*' 'consul*' 'docker*' 'orchbench*' | grep -v not-found"); strings.TrimSpace(out) != "" {
			t.Errorf("%s still has units of ours: %s", h, out)
		}
	}
}

func exports(out string) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	return env
}

func envList(env map[string]string) []string {
	var l []string
	for k, v := range env {
		l = append(l, k+"="+v)
	}
	return l
}

// checkSecurity: nothing of the cluster answers an anonymous request, and
// the secrets stay on this machine, readable by its user only.
func checkSecurity(t *testing.T, env map[string]string) {
	t.Helper()
	server := strings.TrimPrefix(strings.TrimSuffix(env["DOCKER_HOST"], ":2376"), "tcp://")
	pool := func(path string) *x509.CertPool {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p := x509.NewCertPool()
		p.AppendCertsFromPEM(b)
		return p
	}
	anon := func(ca string) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool(ca)}}}
	}
	// Nomad: HTTPS, but no token is no answer
	resp, err := anon(env["NOMAD_CACERT"]).Get("https://" + net.JoinHostPort(server, "4646") + "/v1/jobs")
	if err != nil {
		t.Errorf("anonymous Nomad request: want 403, got %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("anonymous Nomad request: %s, want 403", resp.Status)
		}
	}
	resp, err = http.Get("http://" + net.JoinHostPort(server, "4646") + "/v1/jobs")
	if err == nil {
		b := new(bytes.Buffer)
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP to Nomad answered 200: %s", b)
		}
	}
	// Consul: HTTPS wants a client certificate; plain HTTP is on loopback only
	for _, u := range []string{"https://" + net.JoinHostPort(server, "8501") + "/v1/catalog/services", "https://" + net.JoinHostPort(server, "2376") + "/info"} {
		ca := env["CONSUL_CACERT"]
		if strings.HasSuffix(u, "/info") {
			ca = filepath.Join(env["DOCKER_CERT_PATH"], "ca.pem")
		}
		resp, err := anon(ca).Get(u)
		var opErr *net.OpError
		if err == nil {
			resp.Body.Close()
			t.Errorf("anonymous %s: %s, want the TLS handshake refused", u, resp.Status)
		} else if !errors.As(err, &opErr) && !strings.Contains(err.Error(), "certificate") && !strings.Contains(err.Error(), "tls") {
			t.Errorf("anonymous %s: %v, want a TLS refusal", u, err)
		}
	}
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(server, "8500"), 3*time.Second); err == nil {
		c.Close()
		t.Errorf("Consul's plain HTTP port answers on %s; it must be on loopback only", server)
	}
	resp, err = http.Get("http://" + net.JoinHostPort(server, "2376") + "/info")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP to Docker's port answered 200")
		}
	}
	// the secrets: 0600 files in a 0700 directory, the management tokens
	// never in the exports
	state := filepath.Dir(filepath.Dir(env["ORCHBENCH_PROBE_TOKEN_FILE"]))
	if want := filepath.Join(repoRoot(), ".state", "hosts", hostsName(), "remote"); state != want {
		t.Errorf("the secrets are in %s, want the inventory's state_dir %s", state, want)
	}
	for _, f := range []string{"secrets/nomad-management.token", "secrets/consul-management.token", "secrets/consul-gossip.key", "tls/consul/ca-key.pem", "tls/nomad/ca-key.pem", "tls/docker/ca-key.pem"} {
		st, err := os.Stat(filepath.Join(state, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600 (%v)", f, st.Mode().Perm(), err)
		}
	}
	if st, err := os.Stat(state); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: want mode 0700", state)
	}
	mgmt, _ := os.ReadFile(filepath.Join(state, "secrets", "nomad-management.token"))
	if env["NOMAD_TOKEN"] == "" || env["NOMAD_TOKEN"] == strings.TrimSpace(string(mgmt)) {
		t.Errorf("the exports carry no token, or the management one: NOMAD_TOKEN=%q", env["NOMAD_TOKEN"])
	}
}

// sweepOnRemote runs the short sweep on Nomad and Swarm: every step valid,
// every task's quota read through its host's node probe.
func sweepOnRemote(t *testing.T, env map[string]string) {
	t.Helper()
	dir := t.TempDir()
	began := time.Now()
	// results go to the cluster's VictoriaMetrics, as ORCHBENCH_VM_URL says
	cmd := exec.Command(orchbench(t), "sweep", "-f", "test/remote/remote-quick.hcl", "--dir", filepath.Join(dir, "results"), "--reports", filepath.Join(dir, "reports"))
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), envList(env)...)
	out, err := cmd.CombinedOutput()
	t.Logf("sweep in %.1f s:\n%s", time.Since(began).Seconds(), out)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if strings.Contains(string(out), "not pushed") {
		t.Errorf("results were not pushed to the cluster's VictoriaMetrics (%s)", env["ORCHBENCH_VM_URL"])
	}
	summaries, _ := filepath.Glob(filepath.Join(dir, "results", "*", "*", "summary.json"))
	if len(summaries) != 4 {
		t.Fatalf("%d steps archived, want 4 (2 rates on Nomad and Swarm)", len(summaries))
	}
	for _, s := range summaries {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		var sum struct {
			Step, Orchestrator, Outcome string
			Gates                       []struct {
				Name   string
				Passed bool
				Detail string
			}
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Outcome != "valid" {
			t.Errorf("%s: %s, want valid (gates %+v)", sum.Step, sum.Outcome, sum.Gates)
		}
		for _, g := range sum.Gates {
			if g.Name == "limits" && !strings.Contains(g.Detail, "quota: 0.25 cores") {
				t.Errorf("%s: limits gate %q does not show the quota read through the probe", sum.Step, g.Detail)
			}
			if g.Name == "shipping" && sum.Orchestrator == "nomad" && !g.Passed {
				t.Errorf("%s: shipping gate %q: the node agent should run on the remote Nomad clients", sum.Step, g.Detail)
			}
		}
	}
	checkSinks(t, env, filepath.Base(filepath.Dir(filepath.Dir(summaries[0]))))
}

// checkSinks: the cluster's VictoriaMetrics holds the sweep's 4 steps (as
// pushed), the node agents' host metrics and Nomad's and Consul's own
// (scraped with TLS and tokens); its VictoriaLogs holds Taewa's lines, each
// with its Nomad job (the agent's lookups). Anonymous reads are refused.
func checkSinks(t *testing.T, env map[string]string, sweep string) {
	t.Helper()
	b, err := os.ReadFile(env["ORCHBENCH_VM_CACERT"])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	vm := env["ORCHBENCH_VM_URL"]
	query := func(base, path string) (string, int) {
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			return "", 0
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		return body.String(), resp.StatusCode
	}
	// the agents push every 5 s, VictoriaMetrics scrapes every 5 s
	deadline := time.Now().Add(60 * time.Second)
	for _, q := range []string{
		`count(orchbench_step_achieved_rps{sweep="` + sweep + `"})`,
		`count(count by (host_name) (system_cpu_time_seconds_total))`,
		`count(up{job="nomad"} == 1)`,
		`count(up{job="consul"} == 1)`,
	} {
		for {
			body, code := query(vm, "/api/v1/query?query="+url.QueryEscape(q))
			if code == 200 && strings.Contains(body, `"value":[`) {
				t.Logf("VictoriaMetrics: %s = %s", q, body[strings.Index(body, `"value":[`):])
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("VictoriaMetrics has no %s: %d %s", q, code, body)
				break
			}
			time.Sleep(2 * time.Second)
		}
	}
	if _, code := query(strings.Replace(vm, "orchbench:", "orchbench:wrong", 1), "/api/v1/query?query=up"); code != http.StatusUnauthorized {
		t.Errorf("VictoriaMetrics with a wrong password: %d, want 401", code)
	}
	// VictoriaLogs: the password of the VictoriaMetrics URL is the sinks' one
	u, _ := url.Parse(vm)
	pass, _ := u.User.Password()
	vl := strings.Replace(env["ORCHBENCH_VL_URL"], "https://", "https://orchbench:"+pass+"@", 1)
	for {
		body, code := query(vl, "/select/logsql/query?limit=1&query="+url.QueryEscape(`nomad.job:in("taewa-baseline")`))
		if code == 200 && strings.Contains(body, "taewa") {
			t.Logf("VictoriaLogs: a line of Taewa's: %.300s", body)
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("VictoriaLogs has no line of job taewa-baseline: %d %.300s", code, body)
			break
		}
		time.Sleep(2 * time.Second)
	}
	if _, code := query(env["ORCHBENCH_VL_URL"], "/select/logsql/query?limit=1&query=*"); code != http.StatusUnauthorized {
		t.Errorf("VictoriaLogs without the password: %d, want 401", code)
	}
}
