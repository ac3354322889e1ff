package loadgen

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// A global nobody set reads as nil, in gopher-lua as in LuaJIT, and a
// script fails only where it uses the nil: gopher-lua then says "cannot
// perform concat operation between nil and string", naming no variable,
// where LuaJIT says "attempt to concatenate global 'url' (a nil value)".
// A wrk2 script missing a global that wrk2 sets (url) or that it expects
// from elsewhere fails that way, so the error should say which. The
// chunk's bytecode tells: the globals its failing line reads. Nothing is
// spent until a script fails.

// chunkKey is where a state's registry keeps its script's prototype.
const chunkKey = "orchbench.chunk"

func rememberChunk(L *lua.LState, proto *lua.FunctionProto) {
	ud := L.NewUserData()
	ud.Value = proto
	L.G.Registry.RawSetString(chunkKey, ud)
}

// gopher-lua's instruction layout (opcode.go): the opcode in the top six
// bits, Bx in the low eighteen. GETGLOBAL loads the global named by
// constant Bx.
const (
	opCodeShift = 26
	opBxMask    = 1<<18 - 1
)

// nameNilGlobals appends to a runtime error the globals that its line reads
// and that are nil now.
func nameNilGlobals(L *lua.LState, err error) error {
	var ae *lua.ApiError
	if !errors.As(err, &ae) || ae.Type != lua.ApiErrorRun {
		return err
	}
	ud, ok := L.G.Registry.RawGetString(chunkKey).(*lua.LUserData)
	if !ok {
		return err
	}
	proto, ok := ud.Value.(*lua.FunctionProto)
	if !ok {
		return err
	}
	msg := ae.Object.String()
	var names []string
	var walk func(fp *lua.FunctionProto)
	walk = func(fp *lua.FunctionProto) {
		for pc, inst := range fp.Code {
			if int(inst>>opCodeShift) != lua.OP_GETGLOBAL || pc >= len(fp.DbgSourcePositions) {
				continue
			}
			if !strings.HasPrefix(msg, fmt.Sprintf("%s:%d:", fp.SourceName, fp.DbgSourcePositions[pc])) {
				continue
			}
			k := int(inst & opBxMask)
			if k >= len(fp.Constants) {
				continue
			}
			name, ok := fp.Constants[k].(lua.LString)
			if ok && L.G.Global.RawGetString(string(name)) == lua.LNil && !slices.Contains(names, string(name)) {
				names = append(names, string(name))
			}
		}
		for _, child := range fp.FunctionPrototypes {
			walk(child)
		}
	}
	walk(proto)
	if len(names) == 0 {
		return err
	}
	var note string
	if len(names) == 1 {
		note = fmt.Sprintf(" (global '%s' is nil)", names[0])
	} else {
		note = fmt.Sprintf(" (globals '%s' are nil)", strings.Join(names, "', '"))
	}
	return &lua.ApiError{Type: ae.Type, Object: lua.LString(msg + note), StackTrace: ae.StackTrace, Cause: ae.Cause}
}
