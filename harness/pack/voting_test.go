package pack

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// These tests pin packs/voting (study 001): each storage mode deploys the
// stores it uses and v0 its worker, the stores are never capped, the app and
// the worker follow the variant, and the probe takes exactly the answer the
// app gives once the setup hook's ballot is stored.

type votingTask struct {
	count, cpu, memory int64
	meta               map[string]string
	hardLimit          bool
	args               []string
	env                map[string]string
	template           string
}

type votingJob struct {
	name  string
	meta  map[string]string
	tasks map[string]votingTask
}

func renderVoting(t *testing.T, vars map[string]string) (votingJob, error) {
	t.Helper()
	job, _, err := renderedJob(t, "voting", vars)
	if err != nil {
		return votingJob{}, err
	}
	out := votingJob{name: job.Labels[0], meta: literalStrings(t, only(t, job.Body, "meta").Body), tasks: map[string]votingTask{}}
	for _, group := range job.Body.Blocks {
		if group.Type != "group" {
			continue
		}
		task := only(t, group.Body, "task")
		res := only(t, task.Body, "resources").Body
		vt := votingTask{count: intAttr(t, group.Body, "count"), cpu: intAttr(t, res, "cpu"), memory: intAttr(t, res, "memory"),
			meta: literalStrings(t, only(t, task.Body, "meta").Body), env: map[string]string{}}
		config := only(t, task.Body, "config").Body
		if v, diags := config.Attributes["cpu_hard_limit"].Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.Bool {
			vt.hardLimit = v.True()
		}
		if a, ok := config.Attributes["args"]; ok {
			if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.Type().IsTupleType() {
				for it := v.ElementIterator(); it.Next(); {
					_, e := it.Element()
					if e.Type() == cty.String {
						vt.args = append(vt.args, e.AsString())
					}
				}
			}
		}
		for _, b := range task.Body.Blocks {
			switch b.Type {
			case "template":
				v, _ := b.Body.Attributes["data"].Expr.Value(nil)
				vt.template = v.AsString()
			case "env":
				for name, attr := range b.Body.Attributes {
					if v, diags := attr.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
						vt.env[name] = v.AsString() // ${NOMAD_...} values are left out
					}
				}
			}
		}
		out.tasks[task.Labels[0]] = vt
	}
	return out, nil
}

func mustRenderVoting(t *testing.T, vars map[string]string) votingJob {
	t.Helper()
	j, err := renderVoting(t, vars)
	if err != nil {
		t.Fatalf("render voting %v: %v", vars, err)
	}
	return j
}

func TestVotingStorageModesDeployTheirStores(t *testing.T) {
	for _, c := range []struct {
		mode  string
		tasks []string
		pg    bool
		redis bool
	}{
		{"v0", []string{"postgres", "redis", "voting", "worker"}, true, true},
		{"v1", []string{"postgres", "voting"}, true, false},
		{"v2", []string{"postgres", "voting"}, true, false},
		{"v3", []string{"redis", "voting"}, false, true},
		{"v4", []string{"redis", "voting"}, false, true},
	} {
		for _, server := range []string{"runserver", "gunicorn"} {
			j := mustRenderVoting(t, map[string]string{"storage_mode": c.mode, "server": server})
			var names []string
			for name := range j.tasks {
				names = append(names, name)
			}
			slices.Sort(names)
			if !slices.Equal(names, c.tasks) {
				t.Errorf("%s %s: tasks %v, want %v", c.mode, server, names, c.tasks)
			}
			wantJob := "voting-" + c.mode + "-baseline"
			if server == "gunicorn" {
				wantJob += "-gunicorn"
			}
			app := j.tasks["voting"]
			if j.name != wantJob || j.meta["orchbench_service"] != wantJob || j.meta["orchbench_storage_mode"] != c.mode || j.meta["orchbench_server"] != server {
				t.Errorf("%s %s: job %s, meta %v", c.mode, server, j.name, j.meta)
			}
			debug := map[string]string{"runserver": "true", "gunicorn": "false"}[server]
			if app.env["STORAGE_MODE"] != c.mode || app.env["VOTING_SERVER"] != server || app.env["DJANGO_DEBUG"] != debug || !slices.Equal(app.args, []string{"serve"}) {
				t.Errorf("%s %s: app env %v args %v", c.mode, server, app.env, app.args)
			}
			// each task finds exactly the stores of its mode, by the job's own service names
			for _, name := range []string{"voting", "worker"} {
				task, ok := j.tasks[name]
				if !ok {
					continue
				}
				hasPG := strings.Contains(task.template, `POSTGRES_ADDR={{ with service "`+wantJob+`-postgres|any" }}`)
				hasRedis := strings.Contains(task.template, `REDIS_ADDR={{ with service "`+wantJob+`-redis|any" }}`)
				if hasPG != c.pg || hasRedis != c.redis {
					t.Errorf("%s %s: %s's stores template:\n%s", c.mode, server, name, task.template)
				}
			}
			if w, ok := j.tasks["worker"]; ok && (w.count != 1 || !slices.Equal(w.args, []string{"vote_worker"}) || w.env["DJANGO_DEBUG"] != "false") {
				t.Errorf("%s %s: worker %+v", c.mode, server, w)
			}
		}
	}
}

func TestVotingVariantsSizeTheAppAndTheWorkerNeverTheStores(t *testing.T) {
	for _, c := range []struct {
		vars             map[string]string
		count, cpu, mem  int64
		cores, memMeta   string
		mode, gunicornWs string
		hard             bool
	}{
		{map[string]string{}, 1, 2000, 1024, "1", "1024", "quota", "2", true},
		{map[string]string{"variant": "vertical", "resource_scale": "0.5"}, 1, 2000, 2048, "1", "2048", "quota", "2", true},
		{map[string]string{"variant": "horizontal", "resource_scale": "0.1"}, 2, 200, 1024, "0.1", "1024", "quota", "1", true},
		// study 001's GKE runs: 1, 2, 5 and 10 replicas without limits
		{map[string]string{"variant": "unlimited", "scale": "10", "resource_scale": "0.25"}, 10, 500, 1024, "0", "8192", "shares", "1", false},
		{map[string]string{"gunicorn_workers": "3"}, 1, 2000, 1024, "1", "1024", "quota", "3", true},
	} {
		c.vars["storage_mode"] = "v0"
		j := mustRenderVoting(t, c.vars)
		app, worker := j.tasks["voting"], j.tasks["worker"]
		if app.count != c.count || app.cpu != c.cpu || app.memory != c.mem || app.hardLimit != c.hard || app.env["GUNICORN_WORKERS"] != c.gunicornWs {
			t.Errorf("%v: app %+v", c.vars, app)
		}
		if app.meta["orchbench_cores"] != c.cores || app.meta["orchbench_memory_mib"] != c.memMeta || app.meta["orchbench_cpu_mode"] != c.mode || app.meta["orchbench_role"] != "" {
			t.Errorf("%v: app meta %v", c.vars, app.meta)
		}
		if worker.count != 1 || worker.cpu != app.cpu || worker.memory != app.memory || worker.hardLimit != c.hard ||
			worker.meta["orchbench_cores"] != c.cores || worker.meta["orchbench_cpu_mode"] != c.mode {
			t.Errorf("%v: worker %+v", c.vars, worker)
		}
		for name, mib := range map[string]string{"postgres": "512", "redis": "256"} {
			s := j.tasks[name]
			if s.count != 1 || s.cpu != 200 || s.hardLimit || s.meta["orchbench_cores"] != "0" || s.meta["orchbench_cpu_mode"] != "shares" ||
				s.meta["orchbench_memory_mib"] != mib || s.meta["orchbench_role"] != "datastore" {
				t.Errorf("%v: %s %+v", c.vars, name, s)
			}
		}
		if j.meta["orchbench_count"] != itoa(c.count) || app.env["VOTING_PARTIES"] != "party1,party2,party3,party4,party5,party6" {
			t.Errorf("%v: job meta %v", c.vars, j.meta)
		}
	}
}

// The setup hook posts one ballot; the probe must take the app's see-all
// answer once that ballot is stored, among any other votes, and refuse the
// answer without it.
func TestVotingProbeIsTheSetupBallotReadBack(t *testing.T) {
	j := mustRenderVoting(t, map[string]string{})
	var args []string
	if err := json.Unmarshal([]byte(j.meta["orchbench_setup_args"]), &args); err != nil {
		t.Fatalf("orchbench_setup_args: %v", err)
	}
	i := slices.Index(args, "--body")
	if i < 0 || args[0] != "load" || args[len(args)-1] != "http://{{endpoint}}/voting/vote/" || !slices.Contains(args, "POST") {
		t.Fatalf("setup args %q", args)
	}
	var ballot struct {
		City  int            `json:"city_no"`
		Box   int            `json:"box_no"`
		Size  int            `json:"election_size"`
		Votes map[string]int `json:"votes"`
	}
	if err := json.Unmarshal([]byte(args[i+1]), &ballot); err != nil {
		t.Fatalf("the setup ballot %q: %v", args[i+1], err)
	}
	// box 99999 exists only for election_size 3 (the study's flow sends 1)
	if ballot.City != 81 || ballot.Box != 99999 || ballot.Size != 3 || ballot.Votes["party1"] != 17 || ballot.Votes["party2"] != 4 {
		t.Fatalf("the setup ballot %+v", ballot)
	}
	if j.meta["orchbench_probe_path"] != "/voting/see-all/" || j.meta["orchbench_load_path"] != "/voting/see-all/" {
		t.Errorf("probe %q, load %q", j.meta["orchbench_probe_path"], j.meta["orchbench_load_path"])
	}
	re, err := regexp.Compile(j.meta["orchbench_probe_regex"])
	if err != nil {
		t.Fatal(err)
	}
	// the app's JSON (Python's json.dumps: ", " and ": ", a box's parties in name order)
	alone := `{"votes": {"81": {"99999": {"party1": 17, "party2": 4}}}, "total_votes": {"party1": 17, "party2": 4}}`
	among := `{"votes": {"5": {"1": {"party1": 10}}, "81": {"1": {"party3": 2, "party7": 0}, "700": {"party1": 1}, "99999": {"party1": 17, "party2": 4}}}, "total_votes": {"party3": 2, "party1": 28, "party2": 4}}`
	for _, good := range []string{alone, among} {
		if !re.MatchString(good) {
			t.Errorf("the probe refuses %s", good)
		}
	}
	if len(alone) < atoi(t, j.meta["orchbench_probe_min_bytes"]) {
		t.Errorf("the ballot alone (%d bytes) is under orchbench_probe_min_bytes", len(alone))
	}
	for _, bad := range []string{
		`{"votes": {}, "total_votes": {}}`,
		`{"votes": {"5": {"99999": {"party1": 17, "party2": 4}}}, "total_votes": {"party1": 17, "party2": 4}}`,
		`{"votes": {"81": {"99999": {"party1": 16, "party2": 4}}}, "total_votes": {"party1": 16, "party2": 4}}`,
		`{"status": "error", "message": "OperationalError: connection refused"}`,
		``,
	} {
		if re.MatchString(bad) {
			t.Errorf("the probe accepts %s", bad)
		}
	}
}

func TestVotingRejectsBadValuesNamingTheVariable(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"storage_mode": "v5"}, `unknown storage_mode "v5"; valid storage modes are: v0, v1, v2, v3, v4`},
		{map[string]string{"server": "uwsgi"}, `unknown server "uwsgi"; valid servers are: runserver, gunicorn`},
		{map[string]string{"variant": "bogus"}, "valid variants are: baseline, vertical, horizontal, unlimited"},
		{map[string]string{"scale": "1.5"}, "scale must be a whole number"},
		{map[string]string{"resource_scale": "0"}, "resource_scale must be > 0"},
		{map[string]string{"gunicorn_threads": "0"}, "gunicorn_threads must be a whole number >= 1"},
		{map[string]string{"gunicorn_workers": "-1"}, "gunicorn_workers must be a whole number"},
		{map[string]string{"cache_seconds": "0"}, "cache_seconds must be > 0"},
		{map[string]string{"redis_memory_mib": "64"}, "redis_memory_mib must be a whole number >= 128"},
		{map[string]string{"postgres_cores": "0"}, "postgres_cores must be > 0"},
		{map[string]string{"postgres_check": "http"}, "valid checks are: pg_isready, tcp"},
		{map[string]string{"db_password": ""}, "db_password must not be empty"},
		{map[string]string{"parties": "[]"}, "parties must name at least one party"},
		{map[string]string{"parties": `["party1", "a,b"]`}, `parties: "a,b" is not a party name`},
	} {
		_, err := renderVoting(t, c.vars)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "voting:") {
			t.Errorf("%v: got %v, want an error naming the pack and %q", c.vars, err, c.want)
		}
	}
}
