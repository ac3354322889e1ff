package nomad

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// The adapter keeps setup markers (orchestrator.SetupMarkers) in the KV
// store of the Consul it registers services in: the cluster's own store,
// which outlives any harness process.
var _ orchestrator.SetupMarkers = (*Orchestrator)(nil)

// ReadMarker returns the marker at key, or nil when there is none.
func (a *Orchestrator) ReadMarker(ctx context.Context, key string) (*orchestrator.SetupMarker, error) {
	b, ok, err := a.kv().get(ctx, key)
	if err != nil || !ok {
		return nil, err
	}
	var m orchestrator.SetupMarker
	if err := json.Unmarshal(b, &m); err != nil {
		// a value that is not ours proves nothing about the dataset
		return nil, fmt.Errorf("consul kv %s: not a setup marker: %w", key, err)
	}
	return &m, nil
}

// WriteMarker stores m at key.
func (a *Orchestrator) WriteMarker(ctx context.Context, key string, m orchestrator.SetupMarker) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return a.kv().put(ctx, key, b)
}

// ClearMarkers deletes every marker of the job on the orchestrator.
func (a *Orchestrator) ClearMarkers(ctx context.Context, orch, job string) error {
	if job == "" {
		return errors.New("clear setup markers: no job")
	}
	return a.kv().deleteTree(ctx, orchestrator.MarkerPrefix(orch, job))
}

// consulKV is the little of Consul's KV HTTP API the markers need.
type consulKV struct {
	addr   string // http://host:port
	client *http.Client
}

func (a *Orchestrator) kv() consulKV {
	client := a.HTTP
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	return consulKV{addr: a.ConsulAddr, client: client}
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
	resp, err := kv.client.Do(req)
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
