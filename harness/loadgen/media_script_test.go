package loadgen

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What DeathStarBench's media-microservices script needs from the engine,
// checked with testdata/media-compose.lua, a script of the same shape: the
// global url, and gsub escaping multi-byte titles byte by byte.

// mediaTitles is the script's title list.
var mediaTitles = []string{
	"Avengers: Endgame",
	"Pokémon Detective Pikachu",
	"The Lion King 1½",
	"Harry Potter and the Philosopher's Stone",
	"Miss & Mrs. Cops",
	"Fate/stay night: Heaven’s Feel II. lost butterfly",
	"WALL·E",
	"Flood",
}

const mediaRoute = "/wrk2-api/review/compose"

var mediaText = regexp.MustCompile(`^[0-9a-zA-Z]{256}$`)

// formEscape is what the script's urlEncode makes of s, as LuaJIT runs it:
// %w is ASCII only, so each byte of a multi-byte character is escaped.
func formEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			b.WriteByte('+')
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '.', c == '-':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// checkMediaBody checks one compose form and returns its title and rating.
func checkMediaBody(t *testing.T, body string) (string, int) {
	t.Helper()
	form, err := url.ParseQuery(body)
	if err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	if len(form) != 5 {
		t.Fatalf("body %q: want the five fields username, password, title, rating, text", body)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(form.Get("username"), "username_"))
	if err != nil || n < 1 || n > 1000 || form.Get("password") != "password_"+strconv.Itoa(n) {
		t.Fatalf("body %q: user not username_N/password_N with N in 1..1000", body)
	}
	rating, err := strconv.Atoi(form.Get("rating"))
	if err != nil || rating < 0 || rating > 10 {
		t.Fatalf("body %q: rating not in 0..10", body)
	}
	if !mediaText.MatchString(form.Get("text")) {
		t.Fatalf("body %q: text not 256 letters and digits", body)
	}
	title := form.Get("title")
	if !slices.Contains(mediaTitles, title) {
		t.Fatalf("body %q: title %q is none of the script's", body, title)
	}
	if want := "&title=" + formEscape(title) + "&"; !strings.Contains(body, want) {
		t.Fatalf("body %q: title not escaped as LuaJIT would (%s)", body, want)
	}
	return title, rating
}

func TestMediaComposeScriptRuns(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	// As DeathStarBench runs it: the URL names the route, and the script
	// appends it again.
	res := runLoad(t, Config{URL: srv.URL + mediaRoute, Threads: 2, Connections: 4, Rate: 200, Duration: time.Second,
		ScriptPath: "testdata/media-compose.lua"})
	if res.Requests < 150 || res.Errors.Total() != 0 || res.StatusCodes[200] != res.Requests {
		t.Fatalf("requests %d, statuses %v, errors %+v", res.Requests, res.StatusCodes, res.Errors)
	}
	srv.mu.Lock()
	titles, ratings := map[string]int{}, map[int]int{}
	for _, s := range srv.seen {
		if s.method != "POST" || s.uri != srv.URL+mediaRoute+mediaRoute {
			t.Fatalf("request line %s %s, want POST %s", s.method, s.uri, srv.URL+mediaRoute+mediaRoute)
		}
		if s.contentType != "application/x-www-form-urlencoded" || s.header.Get("Content-Length") != strconv.Itoa(len(s.body)) {
			t.Fatalf("%d-byte body with Content-Type %q, Content-Length %q", len(s.body), s.contentType, s.header.Get("Content-Length"))
		}
		title, rating := checkMediaBody(t, s.body)
		titles[title]++
		ratings[rating]++
	}
	seen := len(srv.seen)
	srv.mu.Unlock()
	// About 25 draws of each title and 18 of each rating: all show up.
	if int64(seen) < res.Requests || len(titles) != len(mediaTitles) || len(ratings) != 11 {
		t.Fatalf("server saw %d requests (result %d), titles %v, ratings %v", seen, res.Requests, titles, ratings)
	}
	if len(res.Endpoints) != 1 || res.Endpoints[0].Label != "POST "+mediaRoute+mediaRoute || res.Endpoints[0].Count != res.Requests {
		t.Fatalf("endpoints %+v", res.Endpoints)
	}
}

// TestScriptSeesWrkGlobals reads back what wrk2 sets before and while a
// script runs.
func TestScriptSeesWrkGlobals(t *testing.T) {
	const src = `
local at_load = url
function init(args)
  seen = table.concat({tostring(at_load), url, tostring(args[0]), tostring(args[1]), tostring(args[2]), tostring(#args),
    wrk.scheme, wrk.host, tostring(wrk.port), wrk.path, wrk.method, tostring(wrk.body), tostring(wrk.headers.Host),
    tostring(wrk.headers["X-Test"]), type(wrk.thread), type(wrk.format), type(wrk.lookup), type(wrk.connect)}, "|")
end
request = function() return wrk.format(nil, "/" .. seen) end`
	for _, c := range []struct{ raw, want string }{
		{"http://127.0.0.1:8080/base/path?q=1",
			"http://127.0.0.1:8080/base/path?q=1|http://127.0.0.1:8080/base/path?q=1|http://127.0.0.1:8080/base/path?q=1|one|two|2|" +
				"http|127.0.0.1|8080|/base/path?q=1|GET|nil|127.0.0.1:8080|yes|table|function|function|function"},
		// No port: wrk.port is nil and Host carries none.
		{"http://localhost",
			"http://localhost|http://localhost|http://localhost|one|two|2|" +
				"http|localhost|nil|/|GET|nil|localhost|yes|table|function|function|function"},
	} {
		target, err := ParseTarget(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		s, err := LoadScript(ScriptOptions{Source: src, Target: target, Args: []string{"one", "two"},
			Headers: []Header{{Name: "X-Test", Value: "yes"}}})
		if err != nil {
			t.Fatalf("LoadScript: %v", err)
		}
		raw, _, err := s.threads[0].request(nil)
		s.Close()
		if err != nil {
			t.Fatalf("request(): %v", err)
		}
		if got := strings.TrimPrefix(requestTarget(string(raw)), "/"); got != c.want {
			t.Errorf("%s: the script saw\n%s\nwant\n%s", c.raw, got, c.want)
		}
		// Host in wrk.headers is the one Host line of the request.
		if n := strings.Count(string(raw), "\r\nHost: "); n != 1 {
			t.Errorf("%s: %d Host lines in %q", c.raw, n, raw)
		}
	}
}

// TestScriptHostHeaderIsNotDoubled: a Host from -H, of any case, is the
// only one, in wrk.headers and on the wire.
func TestScriptHostHeaderIsNotDoubled(t *testing.T) {
	target, err := ParseTarget("http://127.0.0.1:8080/")
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(ScriptOptions{Source: `function init() seen = tostring(wrk.headers.Host) end`, Target: target,
		Headers: []Header{{Name: "host", Value: "example.test"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if seen := s.threads[0].L.GetGlobal("seen").String(); seen != "nil" {
		t.Fatalf("wrk.headers.Host = %s beside -H host", seen)
	}
	if raw := string(s.threads[0].static); strings.Count(strings.ToLower(raw), "\r\nhost: ") != 1 || !strings.Contains(raw, "\r\nhost: example.test\r\n") {
		t.Fatalf("static request %q", raw)
	}
}

// TestScriptNamesNilGlobals: a script using a global nobody set fails with
// an error naming it, at load time and in a hook, as LuaJIT's would.
func TestScriptNamesNilGlobals(t *testing.T) {
	_, err := LoadScript(ScriptOptions{Source: "local base = missing_base .. \"/x\""})
	if err == nil || !strings.Contains(err.Error(), "<string>:1: cannot perform concat operation between nil and string (global 'missing_base' is nil)") {
		t.Fatalf("load-time error: %v", err)
	}

	// Without a target there is no url: DeathStarBench's line fails naming
	// it, and only the globals of the failing line are named.
	s, err := LoadScript(ScriptOptions{Source: `
request = function()
  local ignored = tostring(not_set_but_harmless)
  local path = url .. "/wrk2-api/review/compose"
  return wrk.format("POST", path)
end
function delay() return helper(wait_ms, also_missing) end
`})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = s.threads[0].request(nil)
	if err == nil || !strings.Contains(err.Error(), "<string>:4: cannot perform concat operation between nil and string (global 'url' is nil)") ||
		strings.Contains(err.Error(), "not_set_but_harmless") {
		t.Fatalf("request(): %v", err)
	}
	s.threads[0].err = nil
	s.threads[0].delay()
	if err := s.threads[0].err; err == nil || !strings.Contains(err.Error(), "(globals 'helper', 'wait_ms', 'also_missing' are nil)") {
		t.Fatalf("delay(): %v", err)
	}
}
