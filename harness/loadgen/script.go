package loadgen

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	lua "github.com/yuin/gopher-lua"
)

// wrk's scripting model: the script is loaded into a main Lua state, where
// setup(thread) and done(summary, latency, requests) run, and into one state
// per thread, where init(args), delay(), request() and response() run. A
// thread's connections share its state, so calls into it are serialised.

// ScriptOptions are the inputs of LoadScript.
type ScriptOptions struct {
	Path    string // script file, used when Source is empty
	Source  string
	Target  Target
	Headers []Header // from -H, seen by the script as wrk.headers
	Threads int
	Args    []string // passed to init(args)
	// Allowed vets addresses the script connects to (wrk.connect) or
	// assigns to thread.addr; nil allows everything.
	Allowed func(addr string) error
}

// Script is a loaded wrk script: the main state and one per thread.
type Script struct {
	opts    ScriptOptions
	main    *lua.LState
	threads []*threadScript
}

type threadScript struct {
	s           *Script
	mu          sync.Mutex
	L           *lua.LState
	dynamic     bool // defines request(); otherwise static is sent
	hasDelay    bool
	hasResponse bool
	static      []byte
	addr        string
	stopped     *atomic.Bool
	err         error
}

// LoadScript creates the Lua states and runs setup and init as wrk does.
func LoadScript(o ScriptOptions) (*Script, error) {
	if o.Threads <= 0 {
		o.Threads = 1
	}
	s := &Script{opts: o}
	var err error
	if s.main, err = s.newState(nil); err != nil {
		return nil, err
	}
	for i := 0; i < o.Threads; i++ {
		t := &threadScript{s: s, stopped: new(atomic.Bool)}
		if t.L, err = s.newState(t); err != nil {
			s.Close()
			return nil, err
		}
		s.threads = append(s.threads, t)
	}
	for i, t := range s.threads {
		if fn, ok := s.main.GetGlobal("setup").(*lua.LFunction); ok {
			obj := s.threadObject(s.main, t, i)
			if err := callLua(s.main, lua.P{Fn: fn}, obj); err != nil {
				s.Close()
				return nil, fmt.Errorf("script setup: %w", err)
			}
			if a, ok := obj.RawGetString("addr").(lua.LString); ok && string(a) != "" {
				t.addr = string(a)
			}
		}
		if t.addr != "" && o.Allowed != nil {
			if err := o.Allowed(t.addr); err != nil {
				s.Close()
				return nil, err
			}
		}
		wrk := t.L.GetGlobal("wrk").(*lua.LTable)
		wrk.RawSetString("thread", s.threadObject(t.L, t, i))
		s.defaultHost(wrk)
		if fn, ok := t.L.GetGlobal("init").(*lua.LFunction); ok {
			// wrk passes the command line from the URL on: args[0] is the
			// URL, the script's own arguments follow from args[1].
			args := t.L.NewTable()
			if o.Target.Raw != "" {
				args.RawSetInt(0, lua.LString(o.Target.Raw))
			}
			for _, a := range o.Args {
				args.Append(lua.LString(a))
			}
			if err := callLua(t.L, lua.P{Fn: fn}, args); err != nil {
				s.Close()
				return nil, fmt.Errorf("script init: %w", err)
			}
		}
		_, t.dynamic = t.L.GetGlobal("request").(*lua.LFunction)
		_, t.hasDelay = t.L.GetGlobal("delay").(*lua.LFunction)
		_, t.hasResponse = t.L.GetGlobal("response").(*lua.LFunction)
		if !t.dynamic {
			t.static = []byte(s.format(t.L, lua.LNil, lua.LNil, lua.LNil, lua.LNil))
		}
	}
	return s, nil
}

// Close releases the Lua states.
func (s *Script) Close() {
	if s.main != nil {
		s.main.Close()
	}
	for _, t := range s.threads {
		t.L.Close()
	}
}

// Err is the first error a thread's hooks raised during the run.
func (s *Script) Err() error {
	for i, t := range s.threads {
		t.mu.Lock()
		err := t.err
		t.mu.Unlock()
		if err != nil {
			return fmt.Errorf("script thread %d: %w", i, err)
		}
	}
	return nil
}

func (s *Script) newState(t *threadScript) (*lua.LState, error) {
	L := newLuaState()
	o := s.opts
	wrk := L.NewTable()
	wrk.RawSetString("scheme", lua.LString(o.Target.Scheme))
	wrk.RawSetString("host", lua.LString(o.Target.Host))
	if o.Target.Port != "" {
		wrk.RawSetString("port", lua.LString(o.Target.Port))
	}
	wrk.RawSetString("method", lua.LString("GET"))
	wrk.RawSetString("path", lua.LString(o.Target.Path))
	headers := L.NewTable()
	for _, h := range o.Headers {
		headers.RawSetString(h.Name, lua.LString(h.Value))
	}
	wrk.RawSetString("headers", headers)
	if o.Target.Raw != "" {
		// DeathStarBench's wrk2 sets url in every state before the script
		// runs; its scripts send to url .. "/wrk2-api/...".
		L.SetGlobal("url", lua.LString(o.Target.Raw))
	}
	L.SetFuncs(wrk, map[string]lua.LGFunction{
		"format": func(L *lua.LState) int {
			L.Push(lua.LString(s.format(L, L.Get(1), L.Get(2), L.Get(3), L.Get(4))))
			return 1
		},
		"lookup":  luaLookup,
		"connect": s.luaConnect,
	})
	L.SetGlobal("wrk", wrk)
	if err := doScript(L, o.Path, o.Source); err != nil {
		L.Close()
		return nil, fmt.Errorf("script: %w", err)
	}
	return L, nil
}

// defaultHost puts the Host header into a thread's wrk.headers, as wrk's
// own init does before calling the script's init(args), so scripts that
// read wrk.headers.Host find it. Unlike wrk's, a Host already there under
// any case counts: two Host lines would make a bad request.
func (s *Script) defaultHost(wrk *lua.LTable) {
	headers, ok := wrk.RawGetString("headers").(*lua.LTable)
	if !ok {
		return
	}
	has := false
	headers.ForEach(func(k, _ lua.LValue) {
		if name, ok := k.(lua.LString); ok && strings.EqualFold(string(name), "Host") {
			has = true
		}
	})
	if !has {
		headers.RawSetString("Host", lua.LString(s.opts.Target.HostHeader()))
	}
}

// format is wrk.format: arguments left nil fall back to the wrk table; Host
// is added when missing and Content-Length follows the body.
func (s *Script) format(L *lua.LState, method, path, headers, body lua.LValue) string {
	wrk := L.GetGlobal("wrk").(*lua.LTable)
	if method == lua.LNil {
		method = wrk.RawGetString("method")
	}
	if path == lua.LNil {
		path = wrk.RawGetString("path")
	}
	if headers == lua.LNil {
		headers = wrk.RawGetString("headers")
	}
	if body == lua.LNil {
		body = wrk.RawGetString("body")
	}
	var hs []Header
	if tbl, ok := headers.(*lua.LTable); ok {
		tbl.ForEach(func(k, v lua.LValue) {
			hs = append(hs, Header{Name: k.String(), Value: v.String()})
		})
		// Lua tables have no order; sorting keeps requests reproducible.
		sort.SliceStable(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
	}
	var b []byte
	if body != lua.LNil {
		b = []byte(body.String())
	}
	return string(appendRequest(nil, lua.LVAsString(method), lua.LVAsString(path), s.opts.Target.HostHeader(), hs, b, false))
}

func luaLookup(L *lua.LState) int {
	host, service := L.CheckString(1), L.OptString(2, "80")
	addrs, err := net.LookupHost(host)
	if err != nil {
		L.RaiseError("unable to resolve %s:%s: %v", host, service, err)
		return 0
	}
	out := L.NewTable()
	for _, a := range addrs {
		out.Append(lua.LString(net.JoinHostPort(a, service)))
	}
	L.Push(out)
	return 1
}

func (s *Script) luaConnect(L *lua.LState) int {
	addr := L.CheckString(1)
	if s.opts.Allowed != nil && s.opts.Allowed(addr) != nil {
		L.Push(lua.LFalse)
		return 1
	}
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	L.Push(lua.LBool(err == nil))
	return 1
}

// threadObject is wrk's thread userdata as a table: addr, get, set, stop.
// In the main state get/set reach into the thread's own state.
func (s *Script) threadObject(L *lua.LState, t *threadScript, id int) *lua.LTable {
	obj := L.NewTable()
	obj.RawSetString("id", lua.LNumber(id))
	obj.RawSetString("get", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(2)
		L.Push(copyValue(L, t.L.GetGlobal(name), 0))
		return 1
	}))
	obj.RawSetString("set", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(2)
		t.L.SetGlobal(name, copyValue(t.L, L.Get(3), 0))
		return 0
	}))
	obj.RawSetString("stop", L.NewFunction(func(L *lua.LState) int {
		t.stopped.Store(true)
		return 0
	}))
	return obj
}

// copyValue moves a value between Lua states; tables are deep-copied and
// functions, which cannot cross states, become nil.
func copyValue(to *lua.LState, v lua.LValue, depth int) lua.LValue {
	switch x := v.(type) {
	case lua.LString, lua.LNumber, lua.LBool:
		return x
	case *lua.LTable:
		if depth > 32 {
			return lua.LNil
		}
		out := to.NewTable()
		x.ForEach(func(k, v lua.LValue) { out.RawSet(copyValue(to, k, depth+1), copyValue(to, v, depth+1)) })
		return out
	}
	return lua.LNil
}

func (t *threadScript) setErr(err error) {
	if t.err == nil {
		t.err = err
	}
}

// request calls request(); a second return value, if any, is the label.
func (t *threadScript) request(buf []byte) ([]byte, string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	L := t.L
	if t.err != nil {
		// wrk dies at a script's first error; calling again would only
		// repeat it, and an overflow costs a second to unwind.
		return nil, "", t.err
	}
	if err := callLua(L, lua.P{Fn: L.GetGlobal("request"), NRet: 2}); err != nil {
		t.setErr(err)
		return nil, "", err
	}
	req, label := L.Get(-2), L.Get(-1)
	L.Pop(2)
	str, ok := req.(lua.LString)
	if !ok {
		err := fmt.Errorf("request() returned %s, want a string", req.Type())
		t.setErr(err)
		return nil, "", err
	}
	buf = append(buf[:0], str...)
	if l, ok := label.(lua.LString); ok {
		return buf, string(l), nil
	}
	return buf, "", nil
}

func (t *threadScript) delay() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	L := t.L
	if t.err != nil {
		return 0
	}
	if err := callLua(L, lua.P{Fn: L.GetGlobal("delay"), NRet: 1}); err != nil {
		t.setErr(err)
		return 0
	}
	ms := L.Get(-1)
	L.Pop(1)
	if n, ok := ms.(lua.LNumber); ok && n > 0 {
		return time.Duration(float64(n) * float64(time.Millisecond))
	}
	return 0
}

func (t *threadScript) response(status int, headers []Header, body []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	L := t.L
	if t.err != nil {
		return
	}
	h := L.NewTable()
	for _, x := range headers {
		h.RawSetString(x.Name, lua.LString(x.Value))
	}
	if err := callLua(L, lua.P{Fn: L.GetGlobal("response")}, lua.LNumber(status), h, lua.LString(body)); err != nil {
		t.setErr(err)
	}
}

type scriptSource struct {
	ts        *threadScript
	buf       []byte
	closeConn bool
	labels    labelCache
}

func (s *scriptSource) next(*rand.Rand) ([]byte, string, error) {
	raw, label, err := s.ts.request(s.buf)
	if err != nil {
		return nil, "", err
	}
	s.buf = raw
	if s.closeConn {
		raw = withConnectionClose(raw)
	}
	if label == "" {
		label = s.labels.of(raw)
	}
	return raw, label, nil
}

// callDone runs done(summary, latency, requests) in the main state with
// wrk's shapes: times in microseconds, errors as wrk counts them.
func (s *Script) callDone(res *Result) error {
	if err := s.Err(); err != nil {
		return err
	}
	L := s.main
	fn, ok := L.GetGlobal("done").(*lua.LFunction)
	if !ok {
		return nil
	}
	summary := L.NewTable()
	summary.RawSetString("duration", lua.LNumber(res.DurationSeconds*1e6))
	summary.RawSetString("requests", lua.LNumber(res.Requests))
	summary.RawSetString("bytes", lua.LNumber(res.Bytes))
	errs := L.NewTable()
	for k, v := range map[string]int64{"connect": res.Errors.Connect, "read": res.Errors.Read, "write": res.Errors.Write, "status": res.Errors.Status, "timeout": res.Errors.Timeout} {
		errs.RawSetString(k, lua.LNumber(v))
	}
	summary.RawSetString("errors", errs)

	lat, err := res.Latency.Decode()
	if err != nil {
		lat = newLatencyHist()
	}
	rates := hdr.New(1, 1<<40, 3)
	for _, p := range res.Series {
		if !p.Warmup && p.AchievedRate >= 1 {
			rates.RecordValue(int64(p.AchievedRate / float64(len(s.threads))))
		}
	}
	if err := callLua(L, lua.P{Fn: fn}, summary, statsObject(L, lat), statsObject(L, rates)); err != nil {
		return fmt.Errorf("script done: %w", err)
	}
	return nil
}

// statsObject mirrors wrk's stats userdata: min, max, mean, stdev and
// percentile(p).
func statsObject(L *lua.LState, h *hdr.Histogram) *lua.LTable {
	obj := L.NewTable()
	obj.RawSetString("min", lua.LNumber(h.Min()))
	obj.RawSetString("max", lua.LNumber(h.Max()))
	obj.RawSetString("mean", lua.LNumber(h.Mean()))
	obj.RawSetString("stdev", lua.LNumber(h.StdDev()))
	obj.RawSetString("percentile", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(h.ValueAtPercentile(float64(L.CheckNumber(2)))))
		return 1
	}))
	return obj
}
