package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// A setup marker (orchestrator.SetupMarker) tells a later process that the
// dataset of a running job was loaded. Its key names the job's definition
// by its revision (orchestrator.Revision): on Nomad the JobModifyIndex, the
// Raft index at which it stored the running spec. The version would not
// do: a purged job that is created again starts at version 0 with empty
// stores and would find the marker of the old version 0. Neither would a
// hash of the definition: the re-created job has the same definition but
// not the same data.

// jobDefinition identifies the running definition of one job.
type jobDefinition struct {
	Orchestrator string
	ID           string
	Version      uint64
	Revision     string
}

// markerKey is orchbench/setup/<orchestrator>/<app job>/<revision>-<digest>. The digest
// covers the setup arguments as the pack wrote them (before {{endpoint}} is
// filled in: a rescheduled front end moves, the data does not) and the
// definitions of the deployment's other jobs, whose stores the hook may
// also have filled.
func markerKey(app jobDefinition, others []jobDefinition, args []string) string {
	h := sha256.New()
	canonical, _ := json.Marshal(args)
	h.Write(canonical)
	sorted := append([]jobDefinition(nil), others...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for _, d := range sorted {
		fmt.Fprintf(h, "\n%s@%s", d.ID, d.Revision)
	}
	return orchestrator.MarkerPrefix(app.Orchestrator, app.ID) + url.PathEscape(app.Revision) + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// definitions reads the running definition of each of the deployment's jobs;
// the app's comes first.
func (r *Runner) definitions(ctx context.Context, dep *deployment) ([]jobDefinition, error) {
	var defs []jobDefinition
	for _, d := range append([]*orchestrator.Deployment{dep.app}, dep.jobs...) {
		if len(defs) > 0 && d.Job == dep.app.Job {
			continue
		}
		rev, err := dep.orch.Revision(ctx, d)
		if err != nil {
			return nil, err
		}
		defs = append(defs, jobDefinition{Orchestrator: dep.orch.Name(), ID: d.Job, Version: d.Version, Revision: rev})
	}
	return defs, nil
}

// markersOf is where the deployment's setup markers are kept: the
// orchestrator's own store when it keeps them, else the runner's.
func (r *Runner) markersOf(dep *deployment) orchestrator.SetupMarkers {
	if m, ok := dep.orch.(orchestrator.SetupMarkers); ok {
		return m
	}
	return r.Markers
}

// errNoMarkerStore says that no marker outlives this process on an
// orchestrator: setup then runs in every process that deploys, or finds
// running, a job it has not loaded itself.
func errNoMarkerStore(dep *deployment) error {
	return fmt.Errorf("no store keeps setup markers for %s", dep.orch.Name())
}

// readMarker returns the deployment's marker at key, or nil when there is none.
func (r *Runner) readMarker(ctx context.Context, dep *deployment, key string) (*orchestrator.SetupMarker, error) {
	m := r.markersOf(dep)
	if m == nil {
		return nil, errNoMarkerStore(dep)
	}
	return m.ReadMarker(ctx, key)
}

func (r *Runner) writeMarker(ctx context.Context, dep *deployment, key string, marker orchestrator.SetupMarker) error {
	m := r.markersOf(dep)
	if m == nil {
		return errNoMarkerStore(dep)
	}
	return m.WriteMarker(ctx, key, marker)
}

// clearMarkers deletes every marker of the job on the deployment's
// orchestrator; where none is kept, none can vouch for a half-done load.
func (r *Runner) clearMarkers(ctx context.Context, dep *deployment, job string) error {
	m := r.markersOf(dep)
	if m == nil {
		return nil
	}
	return m.ClearMarkers(ctx, dep.orch.Name(), job)
}
