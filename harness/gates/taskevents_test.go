package gates

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

func TestTaskEventsJudged(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	ev := func(s float64, kind orchestrator.TaskEventKind, group, instance string) orchestrator.TaskEvent {
		return orchestrator.TaskEvent{At: at(s), Kind: kind, Group: group, Task: group, Instance: instance}
	}
	// the events alone: the instances are the same before and after
	steady := Fingerprint{{"a1", "redis"}: {ID: "a1", Group: "redis", Task: "redis"}}
	verdict := func(events []orchestrator.TaskEvent, from time.Time, f *results.FaultRecord) TaskVerdict {
		return TaskEventsGate("s1", TaskEvidence{Events: events, Before: steady, After: steady}, from, f)
	}
	judgeEvents := func(events []orchestrator.TaskEvent, from time.Time, f *results.FaultRecord) ([]results.StepEvent, results.Gate) {
		v := verdict(events, from, f)
		return v.Events, v.Gate
	}
	killed := func() *results.FaultRecord {
		return &results.FaultRecord{Kind: orchestrator.FaultKillTask, Service: "sn-redis", At: at(10), Hit: orchestrator.FaultHit{Instance: "a1", Group: "redis"}}
	}

	t.Run("an instance an earlier node fault took down, reported late, is that fault's", func(t *testing.T) {
		// the revived worker's agent tells of the lost instance's end as the
		// next step's load begins; it ran nowhere when the step began
		late := ev(-0.0, orchestrator.EventExited, "taewa", "old1")
		lost := map[string]bool{"old1": true}
		v := TaskEventsGate("s2", TaskEvidence{Events: []orchestrator.TaskEvent{late}, Before: steady, After: steady, LostEarlier: lost}, start, nil)
		if !v.Gate.Passed || !strings.Contains(v.Gate.Detail, "late reports of instances an earlier step's node fault took down") || v.Events[0].Cause != results.CauseEarlierNodeFault {
			t.Errorf("gate %+v, events %+v: want passed, the event the earlier fault's", v.Gate, v.Events)
		}
		// the deliberately wrong setups: the same event with no earlier
		// fault, and an instance the fault left running (a partition) that
		// ends now, both break the step
		if v := TaskEventsGate("s2", TaskEvidence{Events: []orchestrator.TaskEvent{late}, Before: steady, After: steady}, start, nil); !v.Gate.Breaks {
			t.Errorf("with no earlier fault: gate %+v, want broken", v.Gate)
		}
		stillThere := Fingerprint{{"a1", "redis"}: {ID: "a1", Group: "redis", Task: "redis"}, {"old1", "taewa"}: {ID: "old1", Group: "taewa", Task: "taewa"}}
		if v := TaskEventsGate("s2", TaskEvidence{Events: []orchestrator.TaskEvent{late}, Before: stillThere, After: stillThere, LostEarlier: lost}, start, nil); !v.Gate.Breaks {
			t.Errorf("an instance running when the step began: gate %+v, want broken", v.Gate)
		}
		// a start of a lost instance is never a late report
		if v := TaskEventsGate("s2", TaskEvidence{Events: []orchestrator.TaskEvent{ev(1, orchestrator.EventStarted, "taewa", "old1")}, Before: steady, After: steady, LostEarlier: lost}, start, nil); !v.Gate.Breaks {
			t.Errorf("a start: gate %+v, want broken", v.Gate)
		}
	})
	t.Run("no events pass", func(t *testing.T) {
		_, g := judgeEvents(nil, start, nil)
		if !g.Passed || g.Breaks || g.Detail != "no task started, stopped or restarted during the load; the 1 instances kept their IDs and restart counts" {
			t.Fatalf("gate %+v, want passed", g)
		}
	})
	t.Run("an OOM kill nobody injected breaks the step, named and timed", func(t *testing.T) {
		events := []orchestrator.TaskEvent{ev(12.3, orchestrator.EventOOMKilled, "ferretdb", "f1"), ev(15.4, orchestrator.EventStarted, "ferretdb", "f1")}
		judged, g := judgeEvents(events, start, nil)
		if g.Passed || !g.Breaks {
			t.Fatalf("gate %+v, want a failed gate that breaks the step", g)
		}
		if !strings.Contains(g.Detail, "ferretdb/ferretdb oom-killed at +12.3 s") || !strings.Contains(g.Detail, "started at +15.4 s") {
			t.Errorf("detail %q does not say what happened when", g.Detail)
		}
		if len(judged) != 2 || judged[0].Cause != results.CauseUnplanned {
			t.Errorf("judged %+v", judged)
		}
	})
	t.Run("the injected fault's events pass and give its recovery", func(t *testing.T) {
		f := killed()
		events := []orchestrator.TaskEvent{ev(10.1, orchestrator.EventExited, "redis", "a1"), ev(13.6, orchestrator.EventStarted, "redis", "a1")}
		v := verdict(events, start, f)
		if !v.Gate.Passed {
			t.Fatalf("gate %+v, want passed", v.Gate)
		}
		for _, j := range v.Events {
			if j.Cause != results.CauseInjected {
				t.Errorf("%s: cause %q, want the injected fault", j.TaskEvent, j.Cause)
			}
		}
		if v.Recovery == nil || *v.Recovery < 3.59 || *v.Recovery > 3.61 {
			t.Errorf("recovery %v, want 3.6 s", v.Recovery)
		}
		if f.RecoverySeconds != nil {
			t.Errorf("the judgment wrote into the fault record it was given: recovery %v", *f.RecoverySeconds)
		}
	})
	t.Run("a replacement in the hit group is the fault's", func(t *testing.T) {
		f := killed()
		f.Kind = orchestrator.FaultReplaceInstance
		events := []orchestrator.TaskEvent{ev(10.2, orchestrator.EventStopped, "redis", "a1"), ev(11, orchestrator.EventPlaced, "redis", "b2"), ev(12, orchestrator.EventStarted, "redis", "b2")}
		if _, g := judgeEvents(events, start, f); !g.Passed {
			t.Fatalf("gate %+v, want passed", g)
		}
	})
	t.Run("before the fault, in another group, or an OOM after it, is not the fault's", func(t *testing.T) {
		for _, e := range []orchestrator.TaskEvent{
			ev(9, orchestrator.EventExited, "redis", "a1"),
			ev(11, orchestrator.EventRestarted, "user", "u1"),
			ev(11, orchestrator.EventOOMKilled, "redis", "a1"),
		} {
			if _, g := judgeEvents([]orchestrator.TaskEvent{e}, start, killed()); g.Passed || !g.Breaks {
				t.Errorf("%s at %s: gate %+v, want broken", e, e.At.Sub(start), g)
			}
		}
	})
	t.Run("a fault that failed explains nothing", func(t *testing.T) {
		f := killed()
		f.Error = "no running task"
		if _, g := judgeEvents([]orchestrator.TaskEvent{ev(11, orchestrator.EventExited, "redis", "a1")}, start, f); g.Passed {
			t.Errorf("gate %+v, want broken", g)
		}
	})
	t.Run("a long list is clipped", func(t *testing.T) {
		var events []orchestrator.TaskEvent
		for i := range 8 {
			events = append(events, ev(float64(i), orchestrator.EventRestarted, "user", "u1"))
		}
		if _, g := judgeEvents(events, start, nil); !strings.HasSuffix(g.Detail, "and 3 more") {
			t.Errorf("detail %q", g.Detail)
		}
	})
}

func TestTaskEventsFingerprint(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	instance := func(id, group string, restarts int) orchestrator.Instance {
		return orchestrator.Instance{ID: id, Group: group, Task: group, Restarts: restarts}
	}
	fingerprint := func(ins ...orchestrator.Instance) Fingerprint {
		fp := Fingerprint{}
		for _, in := range ins {
			fp[InstanceKey{in.ID, in.Task}] = in
		}
		return fp
	}
	before := fingerprint(instance("a1", "redis", 0), instance("u1", "user", 2))
	stopped := &results.FaultRecord{Kind: orchestrator.FaultReplaceInstance, Service: "sn-redis", At: start.Add(10 * time.Second),
		Hit: orchestrator.FaultHit{Instance: "a1", Group: "redis"}}
	eventsDown := errors.New("nomad: 503 Service Unavailable")
	cases := []struct {
		name           string
		ev             TaskEvidence
		fault          *results.FaultRecord
		passed, breaks bool
		detail         string
	}{
		{"unchanged", TaskEvidence{Before: before, After: fingerprint(instance("a1", "redis", 0), instance("u1", "user", 2))}, nil, true, false,
			"no task started, stopped or restarted during the load; the 2 instances kept their IDs and restart counts"},
		// the events were lost; the restart count was not
		{"a restart no event told", TaskEvidence{Before: before, After: fingerprint(instance("a1", "redis", 0), instance("u1", "user", 3))}, nil, false, true,
			"instances: user/user (instance u1) restarted: 2 restarts before the load, 3 after"},
		{"a replacement nobody injected", TaskEvidence{Before: before, After: fingerprint(instance("b2", "redis", 0), instance("u1", "user", 2))}, nil, false, true,
			"instances: redis/redis (instance a1) is gone; redis/redis (instance b2) is new (0 restarts)"},
		{"the injected replacement", TaskEvidence{Before: before, After: fingerprint(instance("b2", "redis", 0), instance("u1", "user", 2))}, stopped, true, false,
			"instance changes, all of the injected fault: redis/redis (instance a1) is gone; redis/redis (instance b2) is new (0 restarts)"},
		{"a cascade beside the injected fault", TaskEvidence{Before: before, After: fingerprint(instance("b2", "redis", 0), instance("u1", "user", 3))}, stopped, false, true,
			"instances: user/user (instance u1) restarted: 2 restarts before the load, 3 after"},
		{"events unreadable, instances steady", TaskEvidence{EventsErr: eventsDown, Before: before, After: before}, nil, true, false,
			"the task events could not be read (nomad: 503 Service Unavailable), so the instances alone judged; the 2 instances kept their IDs and restart counts"},
		{"events unreadable, an instance restarted", TaskEvidence{EventsErr: eventsDown, Before: before, After: fingerprint(instance("a1", "redis", 1), instance("u1", "user", 2))}, nil, false, true,
			"instances: redis/redis (instance a1) restarted: 0 restarts before the load, 1 after; the task events could not be read (nomad: 503 Service Unavailable)"},
		// what could not be read is not judged: invalid, not broken
		{"no fingerprint before", TaskEvidence{BeforeErr: errors.New("job sn: 500"), After: before}, nil, false, false,
			"step s1: the instances could not be read before the load: job sn: 500, so whether one restarted or was replaced is unknown"},
		{"no fingerprint after", TaskEvidence{Before: before, AfterErr: errors.New("instances of sn: context deadline exceeded")}, nil, false, false,
			"step s1: the instances could not be read after the load: instances of sn: context deadline exceeded"},
		{"an empty fingerprint", TaskEvidence{Before: Fingerprint{}, After: Fingerprint{}}, nil, false, false,
			"step s1: the instances could not be read before the load: no running instance was listed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := TaskEventsGate("s1", c.ev, start, c.fault).Gate
			if g.Name != TaskEvents || g.Passed != c.passed || g.Breaks != c.breaks || g.NotChecked || !strings.Contains(g.Detail, c.detail) {
				t.Fatalf("gate = %+v\nwant passed=%v breaks=%v with %q", g, c.passed, c.breaks, c.detail)
			}
		})
	}
}
