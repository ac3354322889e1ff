// Package vmpush sends archived step results to VictoriaMetrics, the
// archive's second sink: every sample carries the archive's own time, so a
// push can be repeated from the archive whenever VictoriaMetrics was down.
package vmpush

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

// DefaultVMURL is where the cluster's VictoriaMetrics listens.
const DefaultVMURL = "http://127.0.0.1:8428"

// VMURL returns $ORCHBENCH_VM_URL or DefaultVMURL.
func VMURL() string {
	if u := os.Getenv("ORCHBENCH_VM_URL"); u != "" {
		return u
	}
	return DefaultVMURL
}

// CACertEnv names a CA file a VictoriaMetrics behind HTTPS is checked
// against (a remote cluster's, docs/remote.md); a password rides in the URL
// (https://user:password@host:8428), which Go's client sends as Basic auth.
const CACertEnv = "ORCHBENCH_VM_CACERT"

// DefaultClient is the pushes' client: a 30 s timeout, and the CA of
// ORCHBENCH_VM_CACERT when set.
func DefaultClient() (*http.Client, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	ca := os.Getenv(CACertEnv)
	if ca == "" {
		return c, nil
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CACertEnv, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate", CACertEnv, ca)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	c.Transport = tr
	return c, nil
}

// Pusher sends step results to VictoriaMetrics' Prometheus import endpoint.
// Every sample carries an explicit timestamp derived from the archive, so a
// second push of the same archive writes the same (series, timestamp) pairs,
// which VictoriaMetrics started with -dedup.minScrapeInterval=1ms collapses.
type Pusher struct {
	URL    string       // base URL, e.g. http://127.0.0.1:8428
	Client *http.Client // default: 30 s timeout
	// Attempts per request (default 5), waiting Backoff, 2×Backoff, ...
	// between them (default 500 ms).
	Attempts int
	Backoff  time.Duration
}

// PushStep sends one step's samples.
func (p Pusher) PushStep(ctx context.Context, r results.StepResult) (samples int, err error) {
	body := Exposition(r)
	return bytes.Count(body, []byte{'\n'}), p.post(ctx, body)
}

// PushSweep sends every completed step of a sweep, one request per step,
// with the earlier attempts of steps run again: VictoriaMetrics then holds
// what the archive holds (an invalid attempt shows as such at its own
// time), whether or not it was up when each ran. It only reads the archive.
// It returns the number of samples sent.
func PushSweep(ctx context.Context, a results.Archive, sweepID, vmURL string) (int, error) {
	steps, err := a.LoadSteps(sweepID)
	if err != nil {
		return 0, err
	}
	p := Pusher{URL: vmURL}
	total := 0
	for _, r := range steps {
		earlier, err := a.EarlierAttempts(sweepID, r.Step)
		if err != nil {
			return total, err
		}
		for _, attempt := range append(earlier, r) {
			n, err := p.PushStep(ctx, attempt)
			if err != nil {
				return total, fmt.Errorf("push step %s: %w", r.Step, err)
			}
			total += n
		}
	}
	return total, nil
}

func (p Pusher) post(ctx context.Context, body []byte) error {
	client := p.Client
	if client == nil {
		var err error
		if client, err = DefaultClient(); err != nil {
			return err
		}
	}
	attempts := p.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	backoff := p.Backoff
	if backoff <= 0 {
		backoff = 500 * time.Millisecond
	}
	url := strings.TrimRight(p.URL, "/") + "/api/v1/import/prometheus"
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
			case <-time.After(backoff << (i - 1)):
			}
		}
		retry, err := p.once(ctx, client, url, body)
		if err == nil {
			return nil
		}
		last = err
		if !retry {
			return err
		}
	}
	return fmt.Errorf("after %d attempts: %w", attempts, last)
}

// once sends the body; retry says whether the failure may be transient.
func (p Pusher) once(ctx context.Context, client *http.Client, url string, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "text/plain; version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	err = fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
	// Server trouble and throttling pass; a rejected body will be rejected again.
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, err
}
