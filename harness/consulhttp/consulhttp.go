// Package consulhttp makes the HTTP client the harness talks to Consul
// with, configured from the environment as Consul's own CLI is:
// CONSUL_HTTP_ADDR, CONSUL_HTTP_SSL, CONSUL_HTTP_TOKEN (or _FILE),
// CONSUL_CACERT, CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY,
// CONSUL_TLS_SERVER_NAME. The embedded cluster sets none of them; a remote
// cluster (docs/remote.md) sets them all.
package consulhttp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Addr is the Consul HTTP address to use: addr, else CONSUL_HTTP_ADDR, else
// the embedded cluster's, with a scheme (https when CONSUL_HTTP_SSL is
// true) and no trailing slash.
func Addr(addr string) string {
	if addr == "" {
		addr = os.Getenv("CONSUL_HTTP_ADDR")
	}
	if addr == "" {
		addr = "127.0.0.1:8500"
	}
	if !strings.Contains(addr, "://") {
		scheme := "http"
		if on, _ := parseBool(os.Getenv("CONSUL_HTTP_SSL")); on {
			scheme = "https"
		}
		addr = scheme + "://" + addr
	}
	return strings.TrimRight(addr, "/")
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes":
		return true, nil
	case "", "0", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean", s)
}

// Client returns an HTTP client that sends the environment's token with
// every request and trusts the environment's CA, presenting its client
// certificate when one is set. An unreadable file is an error naming the
// variable.
func Client(timeout time.Duration) (*http.Client, error) {
	if _, err := parseBool(os.Getenv("CONSUL_HTTP_SSL")); err != nil {
		return nil, fmt.Errorf("CONSUL_HTTP_SSL: %w", err)
	}
	token := os.Getenv("CONSUL_HTTP_TOKEN")
	if f := os.Getenv("CONSUL_HTTP_TOKEN_FILE"); token == "" && f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("CONSUL_HTTP_TOKEN_FILE: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: os.Getenv("CONSUL_TLS_SERVER_NAME")}
	if ca := os.Getenv("CONSUL_CACERT"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("CONSUL_CACERT: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CONSUL_CACERT %s: no PEM certificate in it", ca)
		}
		cfg.RootCAs = pool
	}
	cert, key := os.Getenv("CONSUL_CLIENT_CERT"), os.Getenv("CONSUL_CLIENT_KEY")
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY go together; only one is set")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("CONSUL_CLIENT_CERT/CONSUL_CLIENT_KEY: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	tr.TLSClientConfig = cfg
	var rt http.RoundTripper = tr
	if token != "" {
		rt = tokenTransport{token: token, next: tr}
	}
	return &http.Client{Timeout: timeout, Transport: rt}, nil
}

// tokenTransport adds the token to requests that carry none.
type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("X-Consul-Token") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("X-Consul-Token", t.token)
	}
	return t.next.RoundTrip(r)
}
