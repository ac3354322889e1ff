package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// apiClient talks JSON to one agent's HTTPS API with a token.
type apiClient struct {
	base   string
	token  string
	header string // X-Consul-Token or X-Nomad-Token
	http   *http.Client
}

// StatusError is an API's refusal.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Code, strings.TrimSpace(e.Body))
}

// mutualTLS trusts the CA in caFile and shows the certificate pair:
// the harness's side of every API of the cluster (Consul's, Nomad's,
// the Docker engines' and the registry's).
func mutualTLS(caFile, certFile, keyFile string) (*http.Transport, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificate", caFile)
	}
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}, nil
}

// newAPIClient trusts pki's CA and shows the harness's certificate.
func newAPIClient(base string, pki PKI, header, token string) (*apiClient, error) {
	tr, err := mutualTLS(pki.CA(), pki.Cert(CLIName), pki.Key(CLIName))
	if err != nil {
		return nil, err
	}
	return &apiClient{base: base, token: token, header: header, http: &http.Client{Timeout: 15 * time.Second, Transport: tr}}, nil
}

// at is the same client speaking to another agent of the product.
func (c *apiClient) at(base string) *apiClient {
	cc := *c
	cc.base = base
	return &cc
}

// leaderKnown fails until the agent names a raft leader (Consul and Nomad
// answer /v1/status/leader alike).
func (c *apiClient) leaderKnown(ctx context.Context) error {
	var leader string
	if err := c.do(ctx, "GET", "/v1/status/leader", nil, &leader); err != nil {
		return err
	}
	if leader == "" {
		return fmt.Errorf("no leader yet")
	}
	return nil
}

func (c *apiClient) with(token string) *apiClient {
	cc := *c
	cc.token = token
	return &cc
}

func (c *apiClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set(c.header, c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return &StatusError{Code: resp.StatusCode, Body: string(b)}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// waitFor polls f every second until it succeeds or limit passes.
func waitFor(ctx context.Context, limit time.Duration, what string, f func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s: %w", what, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
