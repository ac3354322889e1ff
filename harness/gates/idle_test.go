package gates

import (
	"strings"
	"testing"
	"time"
)

func TestIdleGateFailsWhileATaskIsStillAtWork(t *testing.T) {
	idle := []TaskUse{{Task: "frontend", Cores: 0.0004, Declared: 0.08}, {Task: "mongodb-user", Cores: 0.004, Declared: 0.02}}
	if g := IdleGate(idle, 0, time.Minute); !g.Passed || g.Detail != "2 tasks idle before the load" {
		t.Fatalf("idle tasks: %+v", g)
	}
	if g := IdleGate(idle, 12*time.Second, time.Minute); !g.Passed || !strings.Contains(g.Detail, "after 12s") {
		t.Fatalf("idle after waiting: %+v", g)
	}
	// compose-review drains the backlog an overloaded step left, at its quota
	busy := append(idle, TaskUse{Task: "compose-review", Cores: 0.0199, Declared: 0.02}, TaskUse{Task: "user", Cores: 0.012, Declared: 0.02})
	g := IdleGate(busy, time.Minute, time.Minute)
	if g.Passed || g.NotChecked {
		t.Fatalf("busy tasks passed: %+v", g)
	}
	if !strings.Contains(g.Detail, "still at work 1m0s") || !strings.Contains(g.Detail, "compose-review used 0.020 cores (100 % of its 0.02 declared); user used 0.012 cores") {
		t.Fatalf("detail %q", g.Detail)
	}
	// an uncapped task with no declaration is busy past the floor alone
	if g := IdleGate([]TaskUse{{Task: "redis", Cores: 0.05}}, 0, time.Minute); g.Passed {
		t.Fatalf("a busy undeclared task passed: %+v", g)
	}
	if g := IdleGate(nil, 0, time.Minute); g.Passed || !g.NotChecked {
		t.Fatalf("nothing read: %+v", g)
	}
}
