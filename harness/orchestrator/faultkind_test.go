package orchestrator

import (
	"encoding/json"
	"testing"
)

func TestFaultKindFormerNameMeansTheSameFault(t *testing.T) {
	for _, c := range []struct {
		name          string
		want          FaultKind
		former, known bool
	}{
		{"kill-task", FaultKillTask, false, true},
		{"replace-instance", FaultReplaceInstance, false, true},
		{"stop-alloc", FaultReplaceInstance, true, true},
		{"reboot-node", "reboot-node", false, false},
	} {
		k, former, ok := ParseFaultKind(c.name)
		if k != c.want || former != c.former || ok != c.known {
			t.Errorf("ParseFaultKind(%q) = %q, former %v, known %v; want %q, %v, %v", c.name, k, former, ok, c.want, c.former, c.known)
		}
	}
	// a result archived before the rename reads back as the fault it was
	var f Fault
	if err := json.Unmarshal([]byte(`{"kind":"stop-alloc","service":"redis"}`), &f); err != nil {
		t.Fatal(err)
	}
	if f.Kind != FaultReplaceInstance {
		t.Errorf("archived stop-alloc read as %q", f.Kind)
	}
	out, _ := json.Marshal(f)
	if string(out) != `{"kind":"replace-instance","service":"redis"}` {
		t.Errorf("written back as %s", out)
	}
}
