package nomadattrs

import (
	"container/list"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// allocInfo is what Nomad tells about one allocation; the JSON names are
// those of Nomad's /v1/allocation/<id> response.
type allocInfo struct {
	ID        string `json:"ID"`
	Namespace string `json:"Namespace"`
	JobID     string `json:"JobID"`
	TaskGroup string `json:"TaskGroup"`
	NodeName  string `json:"NodeName"`
}

type cacheEntry struct {
	allocID string
	info    allocInfo
	ok      bool      // false: the lookup failed, ask again after retryAt
	retryAt time.Time // only for failed lookups
}

// resolver looks allocations up in Nomad and remembers them in a bounded LRU
// cache. An allocation's job and group never change, so hits never expire.
type resolver struct {
	endpoint   string
	token      string
	client     *http.Client
	size       int
	retryAfter time.Duration
	logger     *zap.Logger
	now        func() time.Time // a test clock replaces it

	mu    sync.Mutex
	order *list.List // front = most recently used *cacheEntry
	byID  map[string]*list.Element
}

// newResolver fails on a token file or a CA it cannot read, so that the
// collector refuses to start rather than ship without the job names.
func newResolver(c *Config, logger *zap.Logger) (*resolver, error) {
	token := c.Token
	if c.TokenFile != "" {
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("nomadattrs token_file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("nomadattrs ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("nomadattrs ca_file %s: no PEM certificate", c.CAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &resolver{
		endpoint:   strings.TrimRight(c.Endpoint, "/"),
		token:      token,
		client:     &http.Client{Timeout: c.Timeout, Transport: tr},
		size:       c.CacheSize,
		retryAfter: c.RetryAfter,
		logger:     logger,
		now:        time.Now,
		order:      list.New(),
		byID:       map[string]*list.Element{},
	}, nil
}

// lookup returns the allocation's info and whether Nomad gave it. Failures
// are logged once per retry period, never returned: the caller ships the
// record with what the file path told.
func (r *resolver) lookup(ctx context.Context, allocID string) (allocInfo, bool) {
	r.mu.Lock()
	if el, found := r.byID[allocID]; found {
		e := el.Value.(*cacheEntry)
		if e.ok || r.now().Before(e.retryAt) {
			r.order.MoveToFront(el)
			r.mu.Unlock()
			return e.info, e.ok
		}
	}
	r.mu.Unlock()

	// The HTTP call runs unlocked; two batches may ask for the same new
	// allocation at once, which costs one extra request and nothing else.
	info, err := r.fetch(ctx, allocID)
	e := &cacheEntry{allocID: allocID, info: info, ok: err == nil}
	if err != nil {
		e.retryAt = r.now().Add(r.retryAfter)
		r.logger.Warn("nomadattrs: Nomad did not resolve the allocation; its log records ship without nomad.job/nomad.group/nomad.namespace until the next try",
			zap.String("alloc_id", allocID), zap.String("endpoint", r.endpoint),
			zap.Duration("retry_after", r.retryAfter), zap.Error(err))
	}
	r.store(e)
	return e.info, e.ok
}

func (r *resolver) store(e *cacheEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, found := r.byID[e.allocID]; found {
		el.Value = e
		r.order.MoveToFront(el)
		return
	}
	r.byID[e.allocID] = r.order.PushFront(e)
	for r.order.Len() > r.size {
		old := r.order.Back()
		r.order.Remove(old)
		delete(r.byID, old.Value.(*cacheEntry).allocID)
	}
}

// cached reports the number of remembered allocations (for tests).
func (r *resolver) cached() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.order.Len()
}

func (r *resolver) fetch(ctx context.Context, allocID string) (allocInfo, error) {
	u := r.endpoint + "/v1/allocation/" + url.PathEscape(allocID)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return allocInfo{}, err
	}
	if r.token != "" {
		req.Header.Set("X-Nomad-Token", r.token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return allocInfo{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return allocInfo{}, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	var info allocInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return allocInfo{}, fmt.Errorf("GET %s: decoding the allocation: %w", u, err)
	}
	if info.JobID == "" {
		return allocInfo{}, fmt.Errorf("GET %s: the answer has no JobID", u)
	}
	return info, nil
}
