package loadgen

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Sizes of every Lua state. DeathStarBench's scripts build their random
// text by recursing once per character (256 deep for a post), past
// gopher-lua's defaults of 256 call frames and 5120 fixed registry slots.
// LuaJIT 2.1, which wrk2 embeds, holds about 21,800 frames of such a
// function (its stack has 65,500 slots, three per frame), so the call stack
// allows a little more than that. It is gopher-lua's growable one, taken in
// 8-frame segments only as deep as a script goes: a fixed one costs 80
// bytes a frame up front, about 2 MB a state. The registry, gopher-lua's
// value stack, needs about two slots a frame; it starts small, grows in
// 64 KiB steps and stops at four times LuaJIT's whole stack, so anything
// LuaJIT runs fits and a runaway recursion meets the call-stack limit first.
const (
	luaCallDepth       = 24 << 10
	luaRegistryInitial = 1 << 10
	luaRegistryStep    = 4 << 10
	luaRegistryMax     = 256 << 10
)

func newLuaState() *lua.LState {
	L := lua.NewState(lua.Options{
		CallStackSize:       luaCallDepth,
		MinimizeStackMemory: true,
		RegistrySize:        luaRegistryInitial,
		RegistryGrowStep:    luaRegistryStep,
		RegistryMaxSize:     luaRegistryMax,
	})
	openRandom(L)
	openToString(L)
	L.PreloadModule("socket", socketModule)
	return L
}

// callLua is a protected call whose stack overflow reads as LuaJIT's. The
// growable call stack reports it as a Go panic, "lua callstack overflow",
// that names no place; the innermost frame of the traceback does. (An
// overflow a script catches with its own pcall is beyond this: gopher-lua
// then miscounts the stack's depth and may fail later with an index error.)
// An error on a line that reads globals nobody set names them.
func callLua(L *lua.LState, p lua.P, args ...lua.LValue) error {
	p.Protect = true
	err := L.CallByParam(p, args...)
	if err == nil {
		return nil
	}
	return nameNilGlobals(L, restateOverflow(err))
}

func restateOverflow(err error) error {
	var ae *lua.ApiError
	if !errors.As(err, &ae) || ae.Type != lua.ApiErrorPanic || ae.Object.String() != "lua callstack overflow" {
		return err
	}
	where := ""
	if _, frames, ok := strings.Cut(ae.StackTrace, "\n\t"); ok {
		frame, _, _ := strings.Cut(frames, "\n")
		if at, _, ok := strings.Cut(frame, " in "); ok {
			where = at + " "
		}
	}
	msg := fmt.Sprintf("%sstack overflow (more than %d nested calls)", where, luaCallDepth)
	return &lua.ApiError{Type: lua.ApiErrorRun, Object: lua.LString(msg), StackTrace: ae.StackTrace}
}

// doScript loads and runs a chunk through callLua, so an error at load
// time is reported like one in a hook.
func doScript(L *lua.LState, path, source string) error {
	var fn *lua.LFunction
	var err error
	if source != "" {
		fn, err = L.LoadString(source)
	} else {
		fn, err = L.LoadFile(path)
	}
	if err != nil {
		return err
	}
	rememberChunk(L, fn.Proto)
	return callLua(L, lua.P{Fn: fn})
}

// openRandom gives each state its own generator, as LuaJIT's math library
// does. gopher-lua's math.random draws from Go's global source, whose Seed
// has done nothing since Go 1.24, so math.randomseed(x) would not replay a
// sequence. A state nobody seeds starts from a random seed, so the threads
// of a script that never seeds still differ.
func openRandom(L *lua.LState) {
	src := rand.NewPCG(rand.Uint64(), rand.Uint64())
	rng := rand.New(src)
	m, ok := L.GetGlobal("math").(*lua.LTable)
	if !ok {
		return
	}
	m.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		// LuaJIT seeds from all the bits of the number, so the fractions
		// of socket.gettime()*1000 give different sequences.
		src.Seed(math.Float64bits(float64(L.CheckNumber(1))), 0)
		return 0
	}))
	m.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		r := rng.Float64()
		lo, hi := 1.0, 0.0
		switch L.GetTop() {
		case 0:
			L.Push(lua.LNumber(r))
			return 1
		case 1:
			hi = math.Floor(float64(L.CheckNumber(1)))
			if hi < lo {
				L.ArgError(1, "interval is empty")
			}
		case 2:
			lo, hi = math.Floor(float64(L.CheckNumber(1))), math.Floor(float64(L.CheckNumber(2)))
			if hi < lo {
				L.ArgError(2, "interval is empty")
			}
		default:
			L.RaiseError("wrong number of arguments")
		}
		// Scaling a float, as LuaJIT does, covers any range without overflow.
		L.Push(lua.LNumber(lo + math.Floor(r*(hi-lo+1))))
		return 1
	}))
}

// openToString makes tostring print numbers as LuaJIT does, with C's
// "%.14g": gopher-lua prints Go's shortest round-trip form, so a script's
// tostring(38.0235 + (24 - 240.5) / 1000) read 37.806999999999995 where
// wrk2 sends 37.807. Other values keep gopher-lua's tostring. (The ..
// operator on a fractional number still gives the long form; gopher-lua
// offers no hook for it.)
func openToString(L *lua.LState) {
	orig, ok := L.GetGlobal("tostring").(*lua.LFunction)
	if !ok || !orig.IsG {
		return
	}
	L.SetGlobal("tostring", L.NewFunction(func(L *lua.LState) int {
		if n, ok := L.Get(1).(lua.LNumber); ok {
			L.Push(lua.LString(luaJITNumber(float64(n))))
			return 1
		}
		return orig.GFunction(L)
	}))
}

// luaJITNumber is LuaJIT's text of a number: "%.14g", and nan, inf, -inf.
func luaJITNumber(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', 14, 64)
}

// socketModule is the part of LuaSocket that wrk scripts use. Built for
// Lua 5.1, as LuaJIT is, LuaSocket also sets the global socket when it is
// required, and scripts such as DeathStarBench's rely on that after a bare
// require "socket".
func socketModule(L *lua.LState) int {
	mod := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"gettime": func(L *lua.LState) int {
			L.Push(lua.LNumber(float64(time.Now().UnixNano()) / 1e9))
			return 1
		},
		"sleep": func(L *lua.LState) int {
			d := float64(L.CheckNumber(1))
			if d > 0 {
				time.Sleep(secondsToDur(math.Min(d, 60)))
			}
			return 0
		},
	})
	L.SetGlobal("socket", mod)
	L.Push(mod)
	return 1
}
