package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
)

// Revision is part of every plan's version: a change to the translation
// rules re-creates the services an older rule made.
const Revision = "3"

// Options tune a translation.
type Options struct {
	// MHzPerCore turns resources.cpu into cores for tasks without
	// orchbench_cores meta.
	MHzPerCore float64
	Target     Target
}

// Target is the orchestrator a plan is for: its name in messages, and what
// it can enforce and how it differs from Nomad where the rules are the
// same but the words are not.
type Target struct {
	// Name as messages say it ("Swarm", "Kubernetes"); errors start with
	// its lower-case form.
	Name string
	// Revision is the adapter's own rule revision (how it builds its objects
	// from a Service), hashed into the version like the translator's.
	Revision string
	// CPUModes the target enforces; a task declaring another is refused.
	CPUModes []contract.CPUMode
	// Network is what Nomad's host and bridge networking become, e.g. "the
	// job's overlay network" ("the job's network" when empty).
	Network string
	// Reschedule is how the target replaces a failed task, said where the
	// job's reschedule and migrate stanzas are ignored ("no <Name>
	// counterpart" when empty).
	Reschedule string
	// Autoscaler names what runs a group's scaling policy there ("no
	// autoscaler" when empty).
	Autoscaler string
}

func (t Target) autoscaler() string {
	if t.Autoscaler == "" {
		return "no autoscaler"
	}
	return t.Autoscaler
}

func (t Target) network() string {
	if t.Network == "" {
		return "the job's network"
	}
	return t.Network
}

func (t Target) reschedule() string {
	if t.Reschedule == "" {
		return "no " + t.Name + " counterpart"
	}
	return t.Reschedule
}

// prefix starts every error: the target's name in lower case.
func (t Target) prefix() string { return strings.ToLower(t.Name) }

func (t Target) enforces(m contract.CPUMode) bool { return slices.Contains(t.CPUModes, m) }

// cpuModeText says what the target can enforce, e.g. "a CPU quota or nothing".
func (t Target) cpuModeText() string {
	words := map[contract.CPUMode]string{
		contract.CPUModeQuota:      "a CPU quota",
		contract.CPUModeShares:     "nothing",
		contract.CPUModeCPUSet:     "an exclusive cpuset",
		contract.CPUModeUnenforced: "a reservation",
	}
	var out []string
	for _, m := range t.CPUModes {
		out = append(out, words[m])
	}
	if len(out) == 0 {
		return "no CPU mode"
	}
	return strings.Join(out, " or ")
}

// version hashes what decides the services: the job (less the fields a
// Nomad server fills in), the target, the MHz per core and the revisions.
func version(job *api.Job, opts Options) (string, error) {
	j := *job
	j.Stop, j.Status, j.StatusDescription, j.Stable = nil, nil, nil, nil
	j.Version, j.SubmitTime, j.CreateIndex, j.ModifyIndex, j.JobModifyIndex = nil, nil, nil, nil, nil
	j.VersionTag, j.NomadTokenID = nil, nil
	b, err := json.Marshal(struct {
		Revision, Target, TargetRevision string
		CPUModes                         []contract.CPUMode
		MHzPerCore                       float64
		Job                              *api.Job
	}{Revision, opts.Target.Name, opts.Target.Revision, opts.Target.CPUModes, opts.MHzPerCore, &j})
	if err != nil {
		return "", fmt.Errorf("%s: job %s: hash the job spec: %w", opts.Target.prefix(), deref(job.ID), err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}
