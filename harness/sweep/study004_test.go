package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// booksAPI answers study 004's requests as the books packs do; past
// emptyAfter of them on a connection (a user's), a GET by id answers the
// empty object of a lost row.
type booksAPI struct {
	mu         sync.Mutex
	books      []map[string]any
	getByID    map[string]int
	emptyAfter int
}

func (b *booksAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "POST" && r.URL.Path == "/books":
		book := map[string]any{"id": len(b.books) + 1, "title": "something", "author": nil, "year": nil}
		b.books = append(b.books, book)
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(book)
	case r.Method == "PATCH" && r.URL.Path == "/books/1":
		json.NewEncoder(w).Encode(map[string]any{"id": 1, "title": "something else", "author": "Ursula K. Le Guin", "year": 1974})
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/books/"):
		b.getByID[r.RemoteAddr]++
		if b.emptyAfter > 0 && b.getByID[r.RemoteAddr] > b.emptyAfter {
			w.WriteHeader(200)
			io.WriteString(w, `{}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"id": 1, "title": "The Dispossessed", "author": "Ursula K. Le Guin", "year": 1974})
	case r.Method == "GET" && r.URL.Path == "/books":
		json.NewEncoder(w).Encode(b.books)
	case r.Method == "GET" && r.URL.Path == "/cpu-intensive":
		fmt.Fprintf(w, `{"num":%s,"result":832040}`, r.URL.Query().Get("num"))
	default:
		w.WriteHeader(404)
	}
}

// Study 004 runs one level without warm-up, labels requests as sent
// ("GET /books/1") and probes /books/2: every endpoint is still held, to
// its own opening responses, and the GET by id to the probe's body too.
func TestStudy004ResponsesCheckedOnEveryEndpoint(t *testing.T) {
	spec, err := experiment.ParseFile(filepath.Join("..", "..", "experiments", "study-004.hcl"), experiment.Options{BaseDir: filepath.Join("..", "..")})
	if err != nil {
		t.Fatal(err)
	}
	st := experiment.Plan(spec)[0]
	it := st.Load.Iterations
	run := func(api *booksAPI) *loadgen.Result {
		srv := httptest.NewServer(api)
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := loadgen.Run(ctx, loadgen.Config{URL: srv.URL, Threads: st.Users, Connections: st.Users, Timeout: st.Load.Timeout,
			ScriptSource: iterationScript(it.Requests), Closed: &loadgen.Closed{Users: st.Users, Iterations: int64(it.PerUser()), TimeoutLatency: true}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	probePath := "/books/2"
	probeBody := len(`{"id":2,"title":"The Dispossessed","author":"Ursula K. Le Guin","year":1974}`)

	res := run(&booksAPI{getByID: map[string]int{}})
	g := gates.ResponsesGate(probePath, probeBody, gates.BodyReferencesFor(nil, res), res)
	if !g.Passed || g.NotChecked || len(res.Endpoints) != len(it.Requests) {
		t.Fatalf("gate %+v over %d endpoints", g, len(res.Endpoints))
	}
	for _, e := range res.Endpoints {
		if !strings.Contains(g.Detail, e.Label+": ") || strings.Count(g.Detail, "in the opening responses") != len(it.Requests) {
			t.Fatalf("%s is not held to its opening: %s", e.Label, g.Detail)
		}
	}
	// the encoder ends the body with a newline the probe's literal lacks
	if !strings.Contains(g.Detail, fmt.Sprintf("GET /books/1: 77 body bytes on average (reference 77 in the opening responses, probe %d)", probeBody)) {
		t.Fatalf("the GET by id is not held to the probe: %s", g.Detail)
	}

	// the rows are lost after each user's first three passes
	res = run(&booksAPI{getByID: map[string]int{}, emptyAfter: 3})
	g = gates.ResponsesGate(probePath, probeBody, gates.BodyReferencesFor(nil, res), res)
	if g.Passed || g.NotChecked || !g.Breaks || !strings.Contains(g.Detail, "responses shrank under load: GET /books/1: ") ||
		!strings.Contains(g.Detail, "under half of 77 in the opening responses and probe 76") {
		t.Fatalf("lost rows passed: %+v", g)
	}
}
