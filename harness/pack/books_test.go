package pack

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// These tests pin packs/books-node and packs/books-kotlin (study 004): the
// app follows the variant, PostgreSQL never does, the probe matches exactly
// the book the init SQL seeds, and the two packs differ only in the app.

var booksPacks = []string{"books-node", "books-kotlin"}

type booksTask struct {
	count, cpu, memory, memoryMax int64
	meta                          map[string]string
	hardLimit                     bool
	templates                     []string
	env                           map[string]string
}

type booksJob struct {
	name  string
	meta  map[string]string
	tasks map[string]booksTask
	text  string
}

func renderBooks(t *testing.T, name string, vars map[string]string) (booksJob, error) {
	t.Helper()
	job, text, err := renderedJob(t, name, vars)
	if err != nil {
		return booksJob{}, err
	}
	out := booksJob{name: job.Labels[0], meta: literalStrings(t, only(t, job.Body, "meta").Body), tasks: map[string]booksTask{}, text: text}
	for _, group := range job.Body.Blocks {
		if group.Type != "group" {
			continue
		}
		task := only(t, group.Body, "task")
		res := only(t, task.Body, "resources").Body
		bt := booksTask{count: intAttr(t, group.Body, "count"), cpu: intAttr(t, res, "cpu"), memory: intAttr(t, res, "memory"),
			meta: literalStrings(t, only(t, task.Body, "meta").Body)}
		if _, ok := res.Attributes["memory_max"]; ok {
			bt.memoryMax = intAttr(t, res, "memory_max")
		}
		if v, diags := only(t, task.Body, "config").Body.Attributes["cpu_hard_limit"].Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.Bool {
			bt.hardLimit = v.True()
		}
		for _, b := range task.Body.Blocks {
			if b.Type == "template" {
				v, _ := b.Body.Attributes["data"].Expr.Value(nil)
				bt.templates = append(bt.templates, v.AsString())
			}
		}
		bt.env = map[string]string{}
		for name, attr := range only(t, task.Body, "env").Body.Attributes {
			if v, diags := attr.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
				bt.env[name] = v.AsString() // ${NOMAD_...} values are left out
			}
		}
		out.tasks[task.Labels[0]] = bt
	}
	return out, nil
}

func mustRenderBooks(t *testing.T, name string, vars map[string]string) booksJob {
	t.Helper()
	j, err := renderBooks(t, name, vars)
	if err != nil {
		t.Fatalf("render %s %v: %v", name, vars, err)
	}
	return j
}

func TestBooksVariants(t *testing.T) {
	for _, name := range booksPacks {
		for _, c := range []struct {
			vars                 map[string]string
			count, cpu, mem, max int64
			cores, memMeta, mode string
			hard                 bool
			job                  string
		}{
			// study 004's 1 replica at 1000m
			{map[string]string{}, 1, 2000, 1024, 0, "1", "1024", "quota", true, name + "-baseline"},
			{map[string]string{"variant": "vertical", "resource_scale": "0.5"}, 1, 2000, 2048, 0, "1", "2048", "quota", true, name + "-vertical"},
			{map[string]string{"variant": "horizontal", "resource_scale": "0.25"}, 2, 500, 1024, 0, "0.25", "1024", "quota", true, name + "-horizontal"},
			// study 004's 1, 2 and 5 replicas without limits
			{map[string]string{"variant": "unlimited", "scale": "5", "resource_scale": "0.25", "job_name": "b5"}, 5, 500, 1024, 8192, "0", "8192", "shares", false, "b5"},
		} {
			j := mustRenderBooks(t, name, c.vars)
			app, pg := j.tasks[name], j.tasks["postgres"]
			if j.name != c.job || app.count != c.count || app.cpu != c.cpu || app.memory != c.mem || app.memoryMax != c.max || app.hardLimit != c.hard {
				t.Errorf("%s %v: job %s, app %+v", name, c.vars, j.name, app)
			}
			if app.meta["orchbench_cores"] != c.cores || app.meta["orchbench_memory_mib"] != c.memMeta || app.meta["orchbench_cpu_mode"] != c.mode || app.meta["orchbench_role"] != "" {
				t.Errorf("%s %v: app meta %v", name, c.vars, app.meta)
			}
			// PostgreSQL is not scaled with the app and is never capped
			if pg.count != 1 || pg.memory != 512 || pg.cpu != 200 || pg.hardLimit || pg.meta["orchbench_cores"] != "0" ||
				pg.meta["orchbench_cpu_mode"] != "shares" || pg.meta["orchbench_memory_mib"] != "512" || pg.meta["orchbench_role"] != "datastore" {
				t.Errorf("%s %v: postgres %+v", name, c.vars, pg)
			}
			if j.meta["orchbench_service"] != c.job || j.meta["orchbench_count"] != itoa(c.count) {
				t.Errorf("%s %v: job meta %v", name, c.vars, j.meta)
			}
			if !strings.Contains(app.templates[0], `service "`+c.job+`-postgres|any"`) {
				t.Errorf("%s: the app does not find its own PostgreSQL: %s", name, app.templates[0])
			}
		}
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The probe is the seeded book read back: the regex takes exactly the
// answer both apps give for the init SQL's second row, and refuses an
// error, an empty list and book 1 (which the study's requests PATCH).
func TestBooksProbeIsTheSeededBook(t *testing.T) {
	for _, name := range booksPacks {
		j := mustRenderBooks(t, name, map[string]string{})
		re, err := regexp.Compile(j.meta["orchbench_probe_regex"])
		if err != nil {
			t.Fatalf("%s: probe regex: %v", name, err)
		}
		if j.meta["orchbench_probe_path"] != "/books/2" || j.meta["orchbench_load_path"] != "/books/2" {
			t.Errorf("%s: probe %q, load %q", name, j.meta["orchbench_probe_path"], j.meta["orchbench_load_path"])
		}
		seed := j.tasks["postgres"].env["POSTGRES_INIT_SCRIPT"]
		rows := regexp.MustCompile(`\('([^']*)', '([^']*)', ([0-9]+)\)`).FindAllStringSubmatch(seed, -1)
		if len(rows) != 2 {
			t.Fatalf("%s: the init SQL seeds %d books, want 2:\n%s", name, len(rows), seed)
		}
		answer, _ := json.Marshal(map[string]any{"id": 2, "title": rows[1][1], "author": rows[1][2], "year": json.Number(rows[1][3])})
		// the apps answer with fields in the order id, title, author, year
		ordered := `{"id":2,"title":"` + rows[1][1] + `","author":"` + rows[1][2] + `","year":` + rows[1][3] + `}`
		if !re.MatchString(ordered) {
			t.Errorf("%s: the probe refuses the seeded book %s", name, ordered)
		}
		if n := len(ordered); n < atoi(t, j.meta["orchbench_probe_min_bytes"]) {
			t.Errorf("%s: the seeded book (%d bytes) is under orchbench_probe_min_bytes %s", name, n, j.meta["orchbench_probe_min_bytes"])
		}
		for _, wrong := range []string{`{"error":"book 2 not found"}`, `[]`, ``, string(answer) + "x",
			`{"id":1,"title":"` + rows[0][1] + `","author":"` + rows[0][2] + `","year":` + rows[0][3] + `}`} {
			if re.MatchString(wrong) {
				t.Errorf("%s: the probe accepts %q", name, wrong)
			}
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("%q is not a whole number", s)
	}
	return n
}

// The two packs are one shape: rendered with the same variables they differ
// only where the app's name (and its image) appear.
func TestBooksPacksDifferOnlyInTheApp(t *testing.T) {
	for _, vars := range []map[string]string{{}, {"variant": "unlimited", "scale": "2", "resource_scale": "0.5"}} {
		node := mustRenderBooks(t, "books-node", copyVars(vars))
		kotlin := mustRenderBooks(t, "books-kotlin", copyVars(vars))
		if strings.ReplaceAll(kotlin.text, "books-kotlin", "books-node") != node.text {
			t.Errorf("packs/books-node and packs/books-kotlin have drifted apart (%v); diff the two renders", vars)
		}
	}
}

func copyVars(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestBooksRejectsBadValues(t *testing.T) {
	for _, name := range booksPacks {
		for _, c := range []struct {
			vars map[string]string
			want string
		}{
			{map[string]string{"variant": "bogus"}, "valid variants are: baseline, vertical, horizontal, unlimited"},
			{map[string]string{"scale": "1.5"}, "scale must be a whole number"},
			{map[string]string{"resource_scale": "0"}, "resource_scale must be > 0"},
			{map[string]string{"postgres_memory_mib": "64"}, "postgres_memory_mib must be a whole number >= 128"},
			{map[string]string{"db_password": ""}, "db_password must not be empty"},
			{map[string]string{"postgres_check": "http"}, "valid checks are: pg_isready, tcp"},
		} {
			_, err := renderBooks(t, name, c.vars)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), name+":") {
				t.Errorf("%s %v: got %v, want an error naming the pack and %q", name, c.vars, err, c.want)
			}
		}
	}
}
