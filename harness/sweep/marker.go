package sweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// A setup marker is the record a setup hook (a dataset load) leaves in
// Consul KV once it has finished, so that a later process finding the same
// job running (a resumed sweep, the next sweep) can tell a loaded deployment
// from one whose load was interrupted. It lives in the cluster rather than in
// the archive because it describes the deployment, which outlives a sweep.
//
// The key names the job's definition by its revision (orchestrator.Revision):
// Nomad's JobModifyIndex, the Raft index at which it stored the running spec,
// which an identical re-submission keeps and any change, stop or
// purge-and-recreate replaces. The version would not do: a purged job that
// is created again starts at version 0 with empty stores and would find the
// marker of the old version 0. Neither would a hash of the definition: the
// re-created job has the same definition but not the same data. Markers of
// the same job name on two orchestrators are kept apart.
const markerRoot = "orchbench/setup/"

// setupMarker is a marker's value, for whoever reads it (`consul kv get`).
type setupMarker struct {
	Orchestrator string    `json:"orchestrator"`
	Job          string    `json:"job"`
	Version      uint64    `json:"job_version"`
	Revision     string    `json:"revision"`
	Args         []string  `json:"args"`
	Finished     time.Time `json:"finished"`
	Seconds      float64   `json:"seconds"`
}

// jobDefinition identifies the running definition of one job.
type jobDefinition struct {
	Orchestrator string
	ID           string
	Version      uint64
	Revision     string
}

// markerPrefix holds every marker of a job; setup clears it before it starts,
// so markers of superseded definitions do not pile up.
func markerPrefix(orch, job string) string {
	return markerRoot + url.PathEscape(orch) + "/" + url.PathEscape(job) + "/"
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
	return markerPrefix(app.Orchestrator, app.ID) + url.PathEscape(app.Revision) + "-" + hex.EncodeToString(h.Sum(nil))[:12]
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

// consulKV is the little of Consul's KV HTTP API the markers need.
type consulKV struct {
	addr   string // http://host:port
	client *http.Client
}

func (r *Runner) kv() consulKV {
	if r.http == nil {
		r.http = &http.Client{Timeout: 10 * time.Second}
	}
	return consulKV{addr: r.ConsulAddr, client: r.http}
}

func (kv consulKV) url(key string, query string) string {
	segments := strings.Split(key, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	u := strings.TrimRight(kv.addr, "/") + "/v1/kv/" + strings.Join(segments, "/")
	if query != "" {
		u += "?" + query
	}
	return u
}

func (kv consulKV) do(ctx context.Context, method, key, query string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, kv.url(key, query), bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	client := kv.client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("consul kv %s %s: %w", method, key, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// get returns the value at key and whether there is one.
func (kv consulKV) get(ctx context.Context, key string) ([]byte, bool, error) {
	status, b, err := kv.do(ctx, http.MethodGet, key, "raw", nil)
	switch {
	case err != nil:
		return nil, false, err
	case status == http.StatusNotFound:
		return nil, false, nil
	case status != http.StatusOK:
		return nil, false, fmt.Errorf("consul kv get %s: HTTP %d: %s", key, status, strings.TrimSpace(string(b)))
	}
	return b, true, nil
}

func (kv consulKV) put(ctx context.Context, key string, value []byte) error {
	status, b, err := kv.do(ctx, http.MethodPut, key, "", value)
	if err == nil && (status != http.StatusOK || strings.TrimSpace(string(b)) != "true") {
		err = fmt.Errorf("consul kv put %s: HTTP %d: %s", key, status, strings.TrimSpace(string(b)))
	}
	return err
}

// deleteTree deletes every key under prefix; deleting nothing is no error.
func (kv consulKV) deleteTree(ctx context.Context, prefix string) error {
	status, b, err := kv.do(ctx, http.MethodDelete, prefix, "recurse", nil)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("consul kv delete %s: HTTP %d: %s", prefix, status, strings.TrimSpace(string(b)))
	}
	return err
}

// readMarker returns the marker at key, or nil when there is none.
func (kv consulKV) readMarker(ctx context.Context, key string) (*setupMarker, error) {
	b, ok, err := kv.get(ctx, key)
	if err != nil || !ok {
		return nil, err
	}
	var m setupMarker
	if err := json.Unmarshal(b, &m); err != nil {
		// a value that is not ours proves nothing about the dataset
		return nil, fmt.Errorf("consul kv %s: not a setup marker: %w", key, err)
	}
	return &m, nil
}

func (kv consulKV) writeMarker(ctx context.Context, key string, m setupMarker) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return kv.put(ctx, key, b)
}

// clearMarkers deletes every marker of the job on the orchestrator.
func (kv consulKV) clearMarkers(ctx context.Context, orch, job string) error {
	if job == "" {
		return errors.New("clear setup markers: no job")
	}
	return kv.deleteTree(ctx, markerPrefix(orch, job))
}
