package orchestrator

import (
	"context"
	"net/url"
	"time"
)

// A setup marker is the record a setup hook (a dataset load) leaves in the
// cluster once it has finished, so that a later process finding the same
// job running (a resumed sweep, the next sweep) can tell a loaded
// deployment from one whose load was interrupted. It lives in the cluster
// rather than in the archive because it describes the deployment, which
// outlives a sweep.
//
// A marker's key is MarkerPrefix(orchestrator, job) followed by a name of
// the job's running definition (its Revision) and of what the hook was
// given: an identical re-submission keeps the key, any change, stop or
// purge-and-recreate replaces it. Markers of the same job name on two
// orchestrators are kept apart.

// MarkerRoot is where every setup marker is kept.
const MarkerRoot = "orchbench/setup/"

// MarkerPrefix holds every marker of a job on an orchestrator; setup clears
// it before it starts, so markers of superseded definitions do not pile
// up. It ends in a slash: a job whose name extends this one's is not in it.
func MarkerPrefix(orchestrator, job string) string {
	return MarkerRoot + url.PathEscape(orchestrator) + "/" + url.PathEscape(job) + "/"
}

// SetupMarker is a marker's value, for whoever reads it (`consul kv get`).
type SetupMarker struct {
	Orchestrator string    `json:"orchestrator"`
	Job          string    `json:"job"`
	Version      uint64    `json:"job_version"`
	Revision     string    `json:"revision"`
	Args         []string  `json:"args"`
	Finished     time.Time `json:"finished"`
	Seconds      float64   `json:"seconds"`
}

// SetupMarkers keeps setup markers in a cluster. The Nomad adapter keeps
// them in Consul's KV store; a sweep asks an orchestrator for them by type
// assertion, and an adapter that keeps none has the sweep fall back to the
// store it was given.
type SetupMarkers interface {
	// ReadMarker returns the marker at key, nil when there is none. A
	// value that is not a marker is an error: it proves nothing.
	ReadMarker(ctx context.Context, key string) (*SetupMarker, error)
	WriteMarker(ctx context.Context, key string, m SetupMarker) error
	// ClearMarkers deletes every marker under MarkerPrefix(orchestrator,
	// job); deleting none is no error.
	ClearMarkers(ctx context.Context, orchestrator, job string) error
}
