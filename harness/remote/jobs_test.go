package remote

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The infrastructure jobs rendered for a remote cluster, with the
// variables remote up writes, are jobs the pinned Nomad accepts, and say
// what a remote cluster needs: the client host's address with TLS and the
// password for VictoriaMetrics and VictoriaLogs, the scrapes with tokens,
// the agent with the host's Nomad over HTTPS and the merged sink config.
func TestRemoteJobsRenderAndValidate(t *testing.T) {
	toolBin(t, "levant")
	nomad := toolBin(t, "nomad")
	inv := testInventory(t)
	u := &upper{inv: inv, opts: Options{Root: filepath.Join("..", "..")}}
	dir := t.TempDir()
	vars := filepath.Join(dir, "jobs.vars.yml")
	if err := os.WriteFile(vars, []byte(u.jobsVars()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "jobs")
	cmd := exec.Command(filepath.Join("..", "..", "cluster", "jobs.sh"), "render", "victoriametrics", "victorialogs", "agent", "node-probe")
	cmd.Env = append(os.Environ(), "JOBS_VAR_FILE="+vars, "JOBS_ROOT="+remoteRoot, "JOBS_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jobs.sh render: %v\n%s", err, b)
	}
	want := map[string][]string{
		"victoriametrics": {`-httpListenAddr=client.lab.example:8428`, `-tls`, `-httpAuth.password=file:///etc/orchbench/sink.password`,
			`/opt/orchbench/.tools/bin/victoria-metrics`, `bearer_token_file: /etc/orchbench/nomad-metrics.token`, `replacement: "$1:8501"`, `value     = "client"`},
		"victorialogs": {`-httpListenAddr=client.lab.example:9428`, `-tlsCertFile=/etc/docker/orchbench/cert.pem`},
		"agent":        {`--config=/etc/orchbench/agent-remote.yaml`, `NOMAD_ADDR           = "https://${attr.unique.network.ip-address}:4646"`, `NOMAD_DATA_DIR       = "/opt/nomad"`, `NODE_NAME            = "${node.unique.name}"`},
		"node-probe":   {`"--token-file", "/etc/orchbench/probe.token"`},
	}
	for job, needles := range want {
		path := filepath.Join(out, job+".nomad.hcl")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range needles {
			if !strings.Contains(string(b), n) {
				t.Errorf("%s lacks %q", job, n)
			}
		}
		if v, err := exec.Command(nomad, "job", "validate", path).CombinedOutput(); err != nil {
			t.Errorf("nomad job validate %s: %v\n%s", job, err, v)
		}
	}
}
