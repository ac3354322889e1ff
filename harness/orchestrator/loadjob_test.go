package orchestrator

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// What LoadJobEnv packs, the job's own UnpackScript must unpack: the
// arguments with the URL last, and the script at the path they name.
func TestLoadJobEnvCarriesArgumentsAndScriptIntoTheJob(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "harness.lua")
	src := "request = function() return wrk.format(\"GET\", \"/a\") end\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	inJob := filepath.Join(dir, "job", "script.lua")
	req := LoadRequest{URL: "http://127.0.0.1:8080/", Args: []string{"-R", "100", "-s", script}}
	env, err := LoadJobEnv(req, inJob)
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 2 || env[0].Name != EnvLoadArgs || env[1].Name != EnvLoadScript {
		t.Fatalf("environment %+v", env)
	}
	var args []string
	if err := json.Unmarshal([]byte(env[0].Value), &args); err != nil {
		t.Fatal(err)
	}
	if want := []string{"-R", "100", "-s", inJob, req.URL}; !reflect.DeepEqual(args, want) {
		t.Errorf("arguments %q, want %q", args, want)
	}
	if req.Args[3] != script {
		t.Error("LoadJobEnv changed the request's arguments")
	}
	if err := UnpackScript(args, env[1].Value); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(inJob); err != nil || string(got) != src {
		t.Errorf("the job's script %q (%v), want %q", got, err, src)
	}

	env, err = LoadJobEnv(LoadRequest{URL: req.URL, Args: []string{"-R", "100"}}, inJob)
	if err != nil || len(env) != 1 || env[0].Value != `["-R","100","http://127.0.0.1:8080/"]` {
		t.Errorf("without a script: %+v, %v", env, err)
	}

	if err := os.WriteFile(script, make([]byte, MaxScript+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadJobEnv(req, inJob); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a script too large for a job: %v", err)
	}
}

func TestLoadJobResultKeepsAFailedJobsResultWithAnError(t *testing.T) {
	const job = "swarm: load job l1 (task t1)"
	res := &loadgen.Result{Tool: "orchbench-loadgen"}
	raw := []byte("started\nkilled by the OOM killer\n")
	unreadable := errors.New("no such file")
	for name, c := range map[string]struct {
		readErr error
		failure string
		wantRes bool
		wantErr string
	}{
		"exited 0 with a result":    {nil, "", true, ""},
		"exited 0 without a result": {unreadable, "", false, job + " left no result: no such file: killed by the OOM killer"},
		"failed without a result":   {unreadable, "task exited 137", false, job + " task exited 137, and left no readable result (no such file)"},
		"failed with a result":      {nil, "task exited 137", true, job + " task exited 137"},
	} {
		got, gotRaw, err := LoadJobResult(job, res, c.readErr, c.failure, raw)
		if (got != nil) != c.wantRes || string(gotRaw) != string(raw) {
			t.Errorf("%s: result %v, raw %q", name, got, gotRaw)
		}
		if (err == nil && c.wantErr != "") || (err != nil && err.Error() != c.wantErr) {
			t.Errorf("%s: error %v, want %q", name, err, c.wantErr)
		}
	}
}

func TestLoadImageDefaultsToTheSharedImage(t *testing.T) {
	if got := LoadImage(""); got != DefaultLoadImage {
		t.Errorf("no image configured: %q", got)
	}
	if got := LoadImage("orchbench/orchbench:session-abc"); got != "orchbench/orchbench:session-abc" {
		t.Errorf("a configured image: %q", got)
	}
}
