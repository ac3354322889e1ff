package consulhttp

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAddr(t *testing.T) {
	t.Setenv("CONSUL_HTTP_ADDR", "")
	t.Setenv("CONSUL_HTTP_SSL", "")
	if got := Addr(""); got != "http://127.0.0.1:8500" {
		t.Errorf("default: %s", got)
	}
	t.Setenv("CONSUL_HTTP_ADDR", "10.0.0.10:8501")
	t.Setenv("CONSUL_HTTP_SSL", "true")
	if got := Addr(""); got != "https://10.0.0.10:8501" {
		t.Errorf("CONSUL_HTTP_SSL=true: %s", got)
	}
	if got := Addr("http://x:1/"); got != "http://x:1" {
		t.Errorf("explicit: %s", got)
	}
}

// A remote cluster's Consul: HTTPS under its CA, a token on every request.
func TestClientTokenAndCA(t *testing.T) {
	var seen string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Get("X-Consul-Token") }))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONSUL_HTTP_SSL", "")
	t.Setenv("CONSUL_CLIENT_CERT", "")
	t.Setenv("CONSUL_CLIENT_KEY", "")
	t.Setenv("CONSUL_HTTP_TOKEN", "tok-1")
	t.Setenv("CONSUL_CACERT", ca)
	c, err := Client(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	resp.Body.Close()
	if seen != "tok-1" {
		t.Errorf("token sent: %q", seen)
	}
	t.Setenv("CONSUL_CACERT", "")
	c, _ = Client(time.Second)
	if _, err := c.Get(srv.URL); err == nil {
		t.Error("a server of an unknown CA was trusted")
	}
	for k, v := range map[string]string{"CONSUL_CACERT": "/nonexistent", "CONSUL_HTTP_SSL": "maybe", "CONSUL_CLIENT_CERT": ca} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if _, err := Client(time.Second); err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("%s=%s: %v, want an error naming %s", k, v, err, k)
			}
		})
	}
}
