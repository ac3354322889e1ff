package results

import (
	"encoding/json"
	"strings"
	"testing"
)

func sec(v float64) *float64 { return &v }

func TestNodeRecoveryReadsTheRecord(t *testing.T) {
	f := FaultRecord{Kind: "kill-leader", Node: &NodeHit{Name: "s1", Role: "server", Chosen: "holds the nomad leadership"},
		AllHealthySeconds: sec(12.04),
		Leaders: []LeaderChange{
			{ControlPlane: "nomad", Before: "s1", After: "s2", AfterSeconds: sec(4.1)},
			{ControlPlane: "consul", Before: "s3", After: "s3", AfterSeconds: sec(0.1)},
		},
		Scheduling: &SchedulingProbe{Job: "p", AcceptedSeconds: sec(10.9), PlacedSeconds: sec(14.2)},
		Dataset:    &DatasetAfter{Detail: "2 timelines short"},
	}
	want := "kill-leader s1 (server, holds the nomad leadership); every instance healthy again on the remaining nodes after 12.0 s; " +
		"nomad leader s1 → s2 after 4.1 s; consul leader stayed s3 (not the node hit); " +
		"job p, submitted after the fault, placed 14.2 s after it (its first submission accepted after 10.9 s); " +
		"dataset verification failed after the step: 2 timelines short"
	if got := f.NodeRecovery(); got != want {
		t.Errorf("reads\n%s\nwant\n%s", got, want)
	}
	// one server: the leader comes back on its own node, scheduling waited
	f.Leaders = []LeaderChange{{ControlPlane: "nomad", Before: "s1", After: "s1", AfterSeconds: sec(27)}}
	f.Scheduling = &SchedulingProbe{Job: "p", AcceptedSeconds: sec(27), PlacedSeconds: sec(29), Attempts: 5}
	f.AllHealthySeconds, f.AllHealthyNote, f.Dataset = nil, "1 of 2 instances running", &DatasetAfter{Passed: true}
	got := f.NodeRecovery()
	for _, w := range []string{"not recovered before the step ended: 1 of 2 instances running", "nomad: no leader until s1 came back and led again after 27.0 s",
		"scheduling unavailable for 29.0 s: job p placed only then, 5 submissions refused"} {
		if !strings.Contains(got, w) {
			t.Errorf("%q lacks %q", got, w)
		}
	}
	if strings.Contains(got, "dataset") {
		t.Errorf("a passed verification is not news: %q", got)
	}
	f.Scheduling = &SchedulingProbe{Job: "p", Attempts: 40, LastError: "No cluster leader"}
	if s := f.Scheduling.String(); s != "scheduling unavailable until the step ended: job p not placed, 40 submissions refused (No cluster leader)" {
		t.Errorf("%q", s)
	}
}

// The record's new fields are additive: an archived record of an instance
// fault reads the same and writes none of them.
func TestFaultRecordStaysReadable(t *testing.T) {
	old := `{"kind":"kill-task","service":"redis","at":"2026-11-20T10:00:00Z","seconds":4,"hit":{"instance":"a","group":"redis"},"recovery_seconds":3.5}`
	var f FaultRecord
	if err := json.Unmarshal([]byte(old), &f); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(f)
	for _, field := range []string{"node", "leaders", "windows", "all_healthy", "scheduling", "dataset_after", "restored", "failure_detection"} {
		if strings.Contains(string(out), `"`+field) {
			t.Errorf("an instance fault's record writes %s: %s", field, out)
		}
	}
	if f.Recovery() != "redis started again 3.5 s after the fault" {
		t.Errorf("%q", f.Recovery())
	}
}
