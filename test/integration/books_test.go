//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
)

// booksApps are study 004's two implementations of one API.
var booksApps = []string{"books-node", "books-kotlin"}

// booksRequest is one row of the table both apps are sent.
type booksRequest struct {
	name, method, path, contentType, body string
	status                                int
	// message is a part of the {"error": ...} message both must give
	message string
}

// booksBadInput is what study 004's apps must refuse, each with the status
// and the part of the message both must answer with.
var booksBadInput = []booksRequest{
	{"unknown id", "GET", "/books/999999", "", "", 404, "book 999999 not found"},
	{"unknown id (patch)", "PATCH", "/books/999999", "application/json", `{"title":"x"}`, 404, "book 999999 not found"},
	{"unknown id (delete)", "DELETE", "/books/999999", "", "", 404, "book 999999 not found"},
	{"non-numeric id", "GET", "/books/abc", "", "", 400, `id must be an integer between 0 and 2147483647, got "abc"`},
	{"non-numeric id (patch)", "PATCH", "/books/abc", "application/json", `{"title":"x"}`, 400, `got "abc"`},
	{"non-numeric id (delete)", "DELETE", "/books/1x", "", "", 400, `got "1x"`},
	{"id past the column", "GET", "/books/2147483648", "", "", 400, `got "2147483648"`},
	{"malformed JSON", "POST", "/books", "application/json", `{"title":`, 400, "request body is not valid JSON"},
	{"trailing garbage", "POST", "/books", "application/json", `{"title":"x"} y`, 400, "request body is not valid JSON"},
	{"empty body", "POST", "/books", "application/json", "", 400, "request body is not valid JSON"},
	{"not an object", "POST", "/books", "application/json", `["x"]`, 400, "request body must be a JSON object"},
	{"missing required field", "POST", "/books", "application/json", `{"author":"Octavia E. Butler","year":1979}`, 400, `missing required field "title"`},
	{"blank title", "POST", "/books", "application/json", `{"title":"  "}`, 400, `field "title" must be a non-empty string`},
	{"title of the wrong type", "POST", "/books", "application/json", `{"title":5}`, 400, `field "title" must be a non-empty string`},
	{"fractional year", "POST", "/books", "application/json", `{"title":"x","year":1.5}`, 400, `field "year" must be an integer`},
	{"year as a string", "POST", "/books", "application/json", `{"title":"x","year":"1979"}`, 400, `field "year" must be an integer`},
	{"malformed JSON (patch)", "PATCH", "/books/1", "application/json", `{"year":`, 400, "request body is not valid JSON"},
	{"empty patch", "PATCH", "/books/1", "application/json", `{}`, 400, "request body names no field to update"},
	{"method not allowed", "PUT", "/books", "application/json", `{}`, 405, "method PUT is not allowed on /books"},
	{"unknown route", "GET", "/authors", "", "", 404, "no route GET /authors"},
	{"cpu-intensive without num", "GET", "/cpu-intensive", "", "", 400, `query parameter "num" is required`},
	{"cpu-intensive with a word", "GET", "/cpu-intensive?num=x", "", "", 400, `got "x"`},
	{"cpu-intensive past the bound", "GET", "/cpu-intensive?num=11", "", "", 400, "between 0 and 10"},
}

// TestBooksAppsAgree deploys packs/books-node and packs/books-kotlin, each
// with its PostgreSQL, and sends both the same bad requests (same status,
// same non-empty message), the same CRUD sequence (same answers) and the same
// cpu-intensive question (the same known number). It also shows the packs'
// correctness probe refusing a deployment whose seeded book is gone.
func TestBooksAppsAgree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, app := range booksApps {
		if err := exec.Command("docker", "image", "inspect", "orchbench/"+app+":local").Run(); err != nil {
			t.Fatalf("image orchbench/%s:local is missing: run cluster/images.sh books", app)
		}
	}
	ad, err := nomad.New("", "")
	if err != nil {
		t.Fatal(err)
	}
	capacity, err := ad.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// unlimited: no CPU cap, so the JVM starts in seconds; a quarter core
	// reserved per task keeps both packs placeable on two cores
	vars := func(app string) []string {
		return []string{"--var", "job_name=it-" + app, "--var", "variant=unlimited", "--var", "resource_scale=0.25",
			"--var", fmt.Sprintf("mhz_per_core=%g", capacity.MHzPerCore)}
	}
	// both deploy at once: the JVM's start is the long pole
	var wg sync.WaitGroup
	errs := make([]error, len(booksApps))
	for i, app := range booksApps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := sh(root, orchbench, append([]string{"pack", "run", app, "--wait", "--timeout", "5m"}, vars(app)...)...)
			t.Logf("$ orchbench pack run %s\n%s", app, out)
			if err != nil {
				errs[i] = fmt.Errorf("pack run %s: %v", app, err)
			}
		}()
	}
	wg.Wait()
	for _, app := range booksApps {
		defer must(t, orchbench, append([]string{"pack", "destroy", app}, vars(app)...)...)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	base := map[string]string{}
	probes := map[string]contract.Probe{}
	for _, app := range booksApps {
		job := "it-" + app
		info, _, err := ad.Client.Jobs().Info(job, nil)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := contract.ParseApp(info)
		if err != nil {
			t.Fatal(err)
		}
		probes[app] = parsed.Probe
		d := &orchestrator.Deployment{Orchestrator: "nomad", Job: job, Version: *info.Version}
		eps, err := ad.Endpoints(ctx, d, parsed.Service)
		if err != nil {
			t.Fatal(err)
		}
		base[app] = "http://" + eps[0].HostPort()
	}

	t.Run("bad input", func(t *testing.T) {
		for _, r := range booksBadInput {
			var first string
			for _, app := range booksApps {
				status, body := booksDo(t, base[app], r)
				var e struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
					t.Errorf("%s: %s %s %s: answer %q is not {\"error\": \"<message>\"}", app, r.name, r.method, r.path, body)
					continue
				}
				if status != r.status || !strings.Contains(e.Error, r.message) {
					t.Errorf("%s: %s (%s %s): %d %q, want %d and a message with %q", app, r.name, r.method, r.path, status, e.Error, r.status, r.message)
				}
				if first == "" {
					first = e.Error
				} else if e.Error != first {
					t.Errorf("%s: the apps word it differently: %q against %q", r.name, first, e.Error)
				}
			}
		}
	})

	t.Run("crud", func(t *testing.T) {
		steps := []struct {
			req booksRequest
			// want is the body with the created book's id as {id}
			want string
		}{
			{booksRequest{name: "create", method: "POST", path: "/books", contentType: "application/json",
				body: `{"title":"Kindred","author":"Octavia E. Butler","year":1979}`, status: 201},
				`{"id":{id},"title":"Kindred","author":"Octavia E. Butler","year":1979}`},
			{booksRequest{name: "create, title only (the study's body)", method: "POST", path: "/books", contentType: "application/json",
				body: `{"title":"something"}`, status: 201}, ""},
			{booksRequest{name: "read", method: "GET", path: "/books/{id}", status: 200},
				`{"id":{id},"title":"Kindred","author":"Octavia E. Butler","year":1979}`},
			{booksRequest{name: "patch", method: "PATCH", path: "/books/{id}", contentType: "application/json", body: `{"year":1980}`, status: 200},
				`{"id":{id},"title":"Kindred","author":"Octavia E. Butler","year":1980}`},
			{booksRequest{name: "delete", method: "DELETE", path: "/books/{id}", status: 204}, ""},
			{booksRequest{name: "read deleted", method: "GET", path: "/books/{id}", status: 404}, `{"error":"book {id} not found"}`},
			{booksRequest{name: "seeded book", method: "GET", path: "/books/2", status: 200},
				`{"id":2,"title":"The Dispossessed","author":"Ursula K. Le Guin","year":1974}`},
			{booksRequest{name: "cpu-intensive", method: "GET", path: "/cpu-intensive?num=2", status: 200},
				`{"num":2,"iterations":128,"result":-599.628752}`},
		}
		answers := map[string][]string{}
		for _, app := range booksApps {
			id := ""
			for _, s := range steps {
				r := s.req
				r.path = strings.ReplaceAll(r.path, "{id}", id)
				status, body := booksDo(t, base[app], r)
				if status != r.status {
					t.Fatalf("%s: %s (%s %s): %d %q, want %d", app, r.name, r.method, r.path, status, body, r.status)
				}
				if r.name == "create" {
					var b struct{ ID int }
					if err := json.Unmarshal([]byte(body), &b); err != nil || b.ID < 3 {
						t.Fatalf("%s: create answered %q: no new id", app, body)
					}
					id = fmt.Sprint(b.ID)
				}
				if r.name == "create, title only (the study's body)" {
					if !regexp.MustCompile(`^\{"id":[0-9]+,"title":"something","author":null,"year":null\}$`).MatchString(body) {
						t.Errorf("%s: %s answered %q", app, r.name, body)
					}
				} else if want := strings.ReplaceAll(s.want, "{id}", id); body != want {
					t.Errorf("%s: %s (%s %s) answered %q, want %q", app, r.name, r.method, r.path, body, want)
				}
				// the apps' ids may differ on a reused deployment
				body = strings.ReplaceAll(body, `"id":`+id+`,`, `"id":{id},`)
				body = strings.ReplaceAll(body, "book "+id+" ", "book {id} ")
				answers[app] = append(answers[app], fmt.Sprintf("%d %s", status, body))
			}
		}
		// the study's own question, num=8: the same double from both languages
		var cpu []string
		for _, app := range booksApps {
			status, body := booksDo(t, base[app], booksRequest{method: "GET", path: "/cpu-intensive?num=8"})
			if status != 200 || !strings.HasPrefix(body, `{"num":8,"iterations":2097152,"result":`) {
				t.Fatalf("%s: cpu-intensive?num=8: %d %q", app, status, body)
			}
			cpu = append(cpu, body)
		}
		if cpu[0] != cpu[1] {
			t.Errorf("cpu-intensive?num=8: %s answers %s, %s answers %s", booksApps[0], cpu[0], booksApps[1], cpu[1])
		}
		t.Logf("cpu-intensive?num=8 from both: %s", cpu[0])
		if strings.Join(answers[booksApps[0]], "\n") != strings.Join(answers[booksApps[1]], "\n") {
			t.Errorf("the CRUD answers differ:\n%s\n%s", strings.Join(answers[booksApps[0]], "\n"), strings.Join(answers[booksApps[1]], "\n"))
		}
	})

	// The probe passes on the seeded book, and refuses the same route once
	// the book is gone: a deployment without its data cannot be measured.
	t.Run("probe refuses a missing seed", func(t *testing.T) {
		for _, app := range booksApps {
			p := probes[app]
			if p.Path != "/books/2" || p.Regex == nil {
				t.Fatalf("%s: the pack's probe is %+v, want GET /books/2 with a regex", app, p)
			}
			status, body := booksDo(t, base[app], booksRequest{method: "GET", path: p.Path})
			if status != p.Status || len(body) < p.MinBytes || !p.Regex.MatchString(body) {
				t.Fatalf("%s: the probe refuses a healthy deployment: %d %q", app, status, body)
			}
		}
		app := booksApps[0]
		if status, body := booksDo(t, base[app], booksRequest{method: "DELETE", path: "/books/2"}); status != 204 {
			t.Fatalf("%s: DELETE /books/2: %d %q", app, status, body)
		}
		p := probes[app]
		status, body := booksDo(t, base[app], booksRequest{method: "GET", path: p.Path})
		if status == p.Status || p.Regex.MatchString(body) {
			t.Fatalf("%s: the probe accepts the answer for a deleted seed: %d %q", app, status, body)
		}
		t.Logf("%s without its seed: %d %s, refused by the probe (%s)", app, status, body, p.Regex)
	})
}

// booksDo sends one request and returns the status and body.
func booksDo(t *testing.T, base string, r booksRequest) (int, string) {
	t.Helper()
	req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s%s: %v", r.method, base, r.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
