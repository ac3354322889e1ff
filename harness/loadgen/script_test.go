package loadgen

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// What DeathStarBench's wrk2 scripts need from LuaJIT and LuaSocket,
// checked with scripts of the same shape written for these tests.

// scriptRequests loads src for the given threads and returns what each
// thread's request() produced, n calls each.
func scriptRequests(t *testing.T, src string, threads, n int) [][]string {
	t.Helper()
	target, err := ParseTarget("http://127.0.0.1:8080/")
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(ScriptOptions{Source: src, Target: target, Threads: threads})
	if err != nil {
		t.Fatalf("LoadScript: %v", err)
	}
	defer s.Close()
	out := make([][]string, threads)
	for i, ts := range s.threads {
		for range n {
			raw, _, err := ts.request(nil)
			if err != nil {
				t.Fatalf("thread %d request(): %v", i, err)
			}
			out[i] = append(out[i], string(raw))
		}
	}
	return out
}

// requestTarget is the target of a formatted request's request line.
func requestTarget(raw string) string {
	line, _, _ := strings.Cut(raw, "\r\n")
	f := strings.Fields(line)
	if len(f) != 3 {
		return ""
	}
	return f[1]
}

func TestScriptDeepRecursiveBodies(t *testing.T) {
	srv := newServer(t, nil)
	res := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: 4, Rate: 100, Duration: time.Second,
		ScriptPath: "testdata/deep-strings.lua"})
	if res.Requests < 50 || !res.Accounting.Balanced() || res.StatusCodes[200] != res.Requests || res.Accounting.Completed != res.Accounting.Due ||
		res.Errors.Total() != 0 || res.Errors.Status != 0 {
		t.Fatalf("requests %d, statuses %v, errors %+v, %s", res.Requests, res.StatusCodes, res.Errors, res.Accounting)
	}
	body := regexp.MustCompile(`^name=user_7&text=[kL7zQ]{256} @user_7 http://[kL7zQ]{64}&note=[kL7zQ]{600}[kL7zQ]{600}&ids=\["1","2"\]&kind=0$`)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if int64(len(srv.seen)) < res.Requests {
		t.Fatalf("server saw %d requests, result counts %d", len(srv.seen), res.Requests)
	}
	distinct := map[string]bool{}
	for _, s := range srv.seen {
		if s.method != "POST" || s.uri != "http://localhost:8080/wrk2-api/post/compose" {
			t.Fatalf("request line %s %s", s.method, s.uri)
		}
		if !body.MatchString(s.body) || s.header.Get("Content-Length") != fmt.Sprint(len(s.body)) {
			t.Fatalf("body of %d bytes (Content-Length %s): %.80q…", len(s.body), s.header.Get("Content-Length"), s.body)
		}
		distinct[s.body] = true
	}
	if len(distinct) != len(srv.seen) {
		t.Fatalf("%d distinct bodies in %d requests: the threads repeat one random sequence", len(distinct), len(srv.seen))
	}
}

func TestScriptRecursesAsDeepAsLuaJIT(t *testing.T) {
	// LuaJIT 2.1 stops such a function at about 21,800 frames.
	got := scriptRequests(t, `
local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
request = function() return wrk.format("GET", "/" .. depth(21800)) end`, 1, 1)
	if target := requestTarget(got[0][0]); target != "/21800" {
		t.Fatalf("request target %q", target)
	}
}

func TestScriptRandomSeedsLikeLuaJIT(t *testing.T) {
	src := func(seed string) string {
		return `
local socket = require "socket"
local seeded = ` + seed + `
request = function()
  math.randomseed(seeded)
  local draws = {}
  for i = 1, 16 do draws[i] = math.random(0, 999) end
  return wrk.format("GET", "/" .. table.concat(draws, "-"))
end`
	}
	a := scriptRequests(t, src("1700000000000.25"), 2, 2)
	b := scriptRequests(t, src("1700000000000.75"), 1, 1)
	if a[0][0] != a[0][1] || a[0][0] != a[1][0] {
		t.Fatalf("one seed gave different sequences: %q %q %q", requestTarget(a[0][0]), requestTarget(a[0][1]), requestTarget(a[1][0]))
	}
	if a[0][0] == b[0][0] {
		t.Fatalf("seeds differing in their fraction gave one sequence %q", requestTarget(a[0][0]))
	}

	// A bare require sets the global socket, as LuaSocket does under Lua
	// 5.1; DeathStarBench's scripts seed from it that way.
	got := scriptRequests(t, `
require "socket"
math.randomseed(socket.gettime() * 1000)
request = function()
  local lo, hi = math.huge, -math.huge
  for i = 1, 2000 do
    local a, b, c = math.random(0, 5), math.random(3), math.random()
    if c < 0 or c >= 1 or a ~= math.floor(a) or b ~= math.floor(b) then return wrk.format("GET", "/bad") end
    lo, hi = math.min(lo, a, b), math.max(hi, a, b)
  end
  return wrk.format("GET", "/" .. lo .. "-" .. hi .. "-" .. tostring(math.floor(socket.gettime()) > 1.6e9))
end`, 1, 1)
	if target := requestTarget(got[0][0]); target != "/0-5-true" {
		t.Fatalf("range of math.random and socket.gettime: %q", target)
	}

	if _, err := LoadScript(ScriptOptions{Source: `math.random(5, 1)`}); err == nil || !strings.Contains(err.Error(), "interval is empty") {
		t.Fatalf("math.random(5, 1): %v", err)
	}
}

func TestScriptRunawayRecursionFailsTheRun(t *testing.T) {
	srv := newServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Unwinding 24 Ki frames takes a second or two, so one thread will do.
	_, err := Run(ctx, Config{URL: srv.URL, Threads: 1, Connections: 2, Rate: 50, Duration: time.Second,
		ScriptPath: "testdata/runaway.lua"})
	if err == nil || ctx.Err() != nil {
		t.Fatalf("run of a runaway script: %v (context: %v)", err, ctx.Err())
	}
	if msg := err.Error(); !strings.Contains(msg, "testdata/runaway.lua:4: stack overflow") || len(msg) > 4096 {
		t.Fatalf("error does not name the script and line in a few lines: %.600s", msg)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("%d requests sent", n)
	}

	// At load time, and through a metamethod, which recurses in Go.
	_, err = LoadScript(ScriptOptions{Source: "local t = setmetatable({}, {__index = function(t, k) return t[k] end})\nlocal x = t.x"})
	if err == nil || !strings.Contains(err.Error(), "<string>:1: stack overflow") {
		t.Fatalf("runaway __index at load time: %v", err)
	}
}

func TestScriptThreadStopsAtItsFirstError(t *testing.T) {
	s, err := LoadScript(ScriptOptions{Source: `
calls = 0
request = function() calls = calls + 1; error("boom " .. calls) end`})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := s.threads[0]
	for range 3 {
		if _, _, err := ts.request(nil); err == nil || !strings.Contains(err.Error(), "<string>:3: boom 1") {
			t.Fatalf("request(): %v", err)
		}
	}
	if calls := ts.L.GetGlobal("calls"); calls != lua.LNumber(1) {
		t.Fatalf("request() ran %v times after failing once", calls)
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "boom 1") {
		t.Fatalf("Err() = %v", err)
	}
}

// heapPerState is the heap that each of n states made by newState holds.
func heapPerState(n int, newState func() *lua.LState, use func(*lua.LState)) float64 {
	var before, after runtime.MemStats
	// Two collections empty sync.Pool's victim cache, where gopher-lua keeps
	// call-stack segments that earlier states gave back.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	states := make([]*lua.LState, n)
	for i := range states {
		states[i] = newState()
		if use != nil {
			use(states[i])
		}
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(states)
	for _, L := range states {
		L.Close()
	}
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// recurse runs a 1200-deep recursion, which grows the registry and takes
// call-stack segments the way DeathStarBench's scripts do.
func recurse(L *lua.LState) {
	if err := L.DoString(`local function d(n) if n == 0 then return "" end return "x" .. d(n - 1) end local _ = d(1200)`); err != nil {
		panic(err)
	}
}

func TestLuaStateStaysSmall(t *testing.T) {
	// A fixed call stack of luaCallDepth frames would hold about 2 MB a
	// state, over ten times the default.
	ours := heapPerState(64, newLuaState, nil)
	def := heapPerState(64, func() *lua.LState { return lua.NewState() }, nil)
	t.Logf("%.0f bytes a state, gopher-lua's default %.0f", ours, def)
	if ours > 1.5*def {
		t.Fatalf("a state holds %.0f bytes, gopher-lua's default %.0f", ours, def)
	}
}

func BenchmarkLuaStateMemory(b *testing.B) {
	def := heapPerState(64, func() *lua.LState { return lua.NewState() }, nil)
	var ours, deep float64
	for range b.N {
		ours = heapPerState(64, newLuaState, nil)
		deep = heapPerState(64, newLuaState, recurse)
	}
	b.ReportMetric(ours, "B/state")
	b.ReportMetric(deep, "B/state-after-1200-deep")
	b.ReportMetric(def, "B/default-state")
	b.ReportMetric(ours/def, "ratio")
	b.ReportMetric(deep/def, "ratio-after-1200-deep")
}
