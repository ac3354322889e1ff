package results

import (
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// faultStep is a measured step of an HA sweep with its fault record.
func faultStep(id, orch string, outcome Outcome, f FaultRecord) StepResult {
	return StepResult{Labels: Labels{Step: id, App: "sn", Orchestrator: orch, Variant: "baseline"}, Outcome: outcome,
		Metadata: map[string]any{"fault": f}}
}

func killNode(healthy *float64, note string, during, after int64) FaultRecord {
	f := FaultRecord{Kind: orchestrator.FaultKillNode, Node: &NodeHit{Name: "w2", Role: "worker"},
		AllHealthySeconds: healthy, AllHealthyNote: note, TimeoutsInStep: 2,
		Dataset: &DatasetAfter{Passed: true}}
	f.Windows = []FaultWindow{{Name: WindowBefore, Requests: 100}, {Name: WindowDuring, Requests: 200, Errors: during}}
	if healthy != nil {
		f.Windows = append(f.Windows, FaultWindow{Name: WindowAfter, Requests: 400, Errors: after})
	}
	return f
}

// cutOff marks a record whose node hit held the harness's API address.
func cutOff(f FaultRecord) FaultRecord {
	f.HarnessEndpoint = "NOMAD_ADDR=http://10.0.0.11:4646"
	return f
}

func faultFixture() ([]experiment.Step, []StepResult) {
	plan := []experiment.Step{
		{ID: "kn-on-1", HA: experiment.HAOn}, {ID: "kn-on-2", HA: experiment.HAOn}, {ID: "kn-on-3", HA: experiment.HAOn},
		{ID: "kn-on-4", HA: experiment.HAOn}, {ID: "kn-off-1", HA: experiment.HAOff},
		{ID: "kl-on-1", HA: experiment.HAOn}, {ID: "kl-off-1", HA: experiment.HAOff}, {ID: "kl-off-2", HA: experiment.HAOff},
		{ID: "sw-kn-on-1", HA: experiment.HAOn}, {ID: "base-on-1", HA: experiment.HAOn},
	}
	leader := func(after string, secs *float64, probe SchedulingProbe) FaultRecord {
		return FaultRecord{Kind: orchestrator.FaultKillLeader, Node: &NodeHit{Name: "s1", Role: "server"},
			AllHealthySeconds: sec(0.5),
			Leaders: []LeaderChange{
				{ControlPlane: "nomad", Before: "s1", After: after, AfterSeconds: secs},
				{ControlPlane: "consul", Before: "s2", After: "s2", AfterSeconds: sec(0.2)},
			},
			Scheduling: &probe, Windows: []FaultWindow{{Name: WindowDuring, Requests: 10}, {Name: WindowAfter, Requests: 500}}}
	}
	lost := killNode(sec(30), "", 10, 0)
	lost.Dataset = &DatasetAfter{Detail: "user 12's timeline lacks 3 posts"}
	steps := []StepResult{
		faultStep("kn-on-1", "nomad", OutcomeBroken, killNode(sec(41.5), "", 50, 5)),
		faultStep("kn-on-2", "nomad", OutcomeBroken, killNode(sec(27.6), "", 30, 0)),
		faultStep("kn-on-3", "nomad", OutcomeValid, killNode(sec(35.7), "", 20, 1)),
		// what ran was not what was declared: left out, counted
		faultStep("kn-on-4", "nomad", OutcomeInvalid, killNode(sec(1), "", 0, 0)),
		// HA off: the worker's instance has nowhere to go
		faultStep("kn-off-1", "nomad", OutcomeBroken, killNode(nil, "1 of 2 instances running", 90, 0)),
		faultStep("kl-on-1", "nomad", OutcomeValid, leader("s3", sec(3.4), SchedulingProbe{Job: "p", AcceptedSeconds: sec(10.3), PlacedSeconds: sec(12.3)})),
		faultStep("kl-off-1", "nomad", OutcomeValid, leader("s1", sec(26.6), SchedulingProbe{Job: "p", AcceptedSeconds: sec(27), PlacedSeconds: sec(28.4), Attempts: 5})),
		faultStep("kl-off-2", "nomad", OutcomeValid, cutOff(leader("", nil, SchedulingProbe{Job: "p", Attempts: 9, LastError: "no leader"}))),
		faultStep("sw-kn-on-1", "swarm", OutcomeBroken, lost),
		// a baseline step has no fault: not in the table
		{Labels: Labels{Step: "base-on-1", Orchestrator: "nomad"}, Outcome: OutcomeValid},
	}
	return plan, steps
}

func TestFaultsAndRecoveryRowsAndFigures(t *testing.T) {
	rows := FaultsAndRecovery(faultFixture())
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = r.Orchestrator + "/" + r.Shape + "/" + string(r.Kind)
	}
	want := []string{"nomad/off/kill-leader", "nomad/off/kill-node", "nomad/on/kill-leader", "nomad/on/kill-node", "swarm/on/kill-node"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("rows %v, want %v", got, want)
	}

	on := rows[3]
	if len(on.Steps) != 3 || on.Invalid != 1 {
		t.Errorf("HA on kill-node counts %v with %d invalid, want 3 steps and 1 invalid", on.Steps, on.Invalid)
	}
	if on.Recovery.N != 3 || on.Recovery.Median != 35.7 || on.Recovery.Lo != 27.6 || on.Recovery.Hi != 41.5 {
		t.Errorf("recovery %+v, want median 35.7 over 27.6–41.5", on.Recovery)
	}
	// a window's requests are the answered ones: the total adds the failed,
	// so errors never exceed it
	if on.During.String() != "100 of 700 (14.29 %)" || on.After.String() != "6 of 1206 (0.50 %)" || on.Timeouts != 6 {
		t.Errorf("errors during %s, after %s, timeouts %d", on.During, on.After, on.Timeouts)
	}
	if on.RecoveryText() != "35.7 (range 27.6–41.5, n=3, 75 %) s; 3 of 3 recovered" || on.DatasetText() != "none (3 of 3 verified)" {
		t.Errorf("texts %q, %q", on.RecoveryText(), on.DatasetText())
	}
	if on.SchedulingText() != "-" || on.LeaderText() != "-" {
		t.Errorf("kill-node has no scheduling probe or leader: %q %q", on.SchedulingText(), on.LeaderText())
	}

	leaderOn, leaderOff := rows[2], rows[0]
	if leaderOn.LeaderBack.Median != 3.4 || leaderOn.Scheduling.Median != 12.3 || leaderOn.SchedulingRefused != 0 {
		t.Errorf("HA on kill-leader: leader %+v, scheduling %+v", leaderOn.LeaderBack, leaderOn.Scheduling)
	}
	if leaderOff.LeaderBack.N != 1 || leaderOff.LeaderLost != 1 || leaderOff.SchedulingNever != 1 || leaderOff.SchedulingRefused != 14 {
		t.Errorf("HA off kill-leader: %+v", leaderOff)
	}
	if w := "placed after 28.4 (n=1) s; not placed before the step ended in 1 (2 steps, 14 submissions refused)"; leaderOff.SchedulingText() != w {
		t.Errorf("HA off scheduling reads %q, want %q", leaderOff.SchedulingText(), w)
	}
	if len(leaderOff.HarnessCutOff) != 1 || leaderOff.HarnessCutOff[0] != "kl-off-2: NOMAD_ADDR=http://10.0.0.11:4646" || len(leaderOn.HarnessCutOff) != 0 {
		t.Errorf("harness cut off: %v (HA on %v)", leaderOff.HarnessCutOff, leaderOn.HarnessCutOff)
	}
	if leaderOff.LeaderText() != "26.6 (n=1) s; none in 1" {
		t.Errorf("HA off leader reads %q", leaderOff.LeaderText())
	}

	if lost := rows[4]; len(lost.DatasetFailed) != 1 || !strings.Contains(lost.DatasetText(), "1 of 1 failed: sw-kn-on-1: user 12's timeline lacks 3 posts") {
		t.Errorf("writes lost reads %q", lost.DatasetText())
	}
}

// A fault step that never recovered is shown as such, with what was
// missing, and no recovery time is made up for it.
func TestFaultsAndRecoveryShowsAStepThatDidNotRecover(t *testing.T) {
	off := FaultsAndRecovery(faultFixture())[1]
	if off.Recovery.N != 0 || off.During.String() != "90 of 290 (31.03 %)" || off.After.String() != "-" {
		t.Errorf("unrecovered kill-node: recovery %+v, during %s, after %s", off.Recovery, off.During, off.After)
	}
	if w := "-; 0 of 1 recovered, not before the step ended: kn-off-1: 1 of 2 instances running"; off.RecoveryText() != w {
		t.Errorf("reads %q, want %q", off.RecoveryText(), w)
	}

	// a fault that was not injected is named, not counted as a recovery
	_, steps := faultFixture()
	steps = append(steps, faultStep("kn-off-2", "nomad", OutcomeInvalid, FaultRecord{Kind: orchestrator.FaultKillNode, Error: "no worker runs an instance of frontend"}))
	plan, _ := faultFixture()
	plan = append(plan, experiment.Step{ID: "kn-off-2", HA: experiment.HAOff})
	off = FaultsAndRecovery(plan, steps)[1]
	if len(off.NotInjected) != 1 || !strings.Contains(off.NotInjected[0], "no worker runs") || !strings.HasSuffix(off.RecoveryText(), "0 of 1 recovered, not before the step ended: kn-off-1: 1 of 2 instances running") {
		t.Errorf("not injected: %v; %q", off.NotInjected, off.RecoveryText())
	}
}
