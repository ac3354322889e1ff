package nomadattrs

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// A remote cluster's Nomad: HTTPS under its own CA and ACLs. The token is
// read from token_file and sent, the certificate checked against ca_file;
// without the CA the lookup fails, and an unreadable file stops the
// processor from starting.
func TestTokenFileAndCAFile(t *testing.T) {
	const token = "5e1f0c1e-0000-4000-8000-000000000001"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Nomad-Token") != token {
			http.Error(w, "Permission denied", http.StatusForbidden)
			return
		}
		_ = json.NewEncoder(w).Encode(allocInfo{ID: strings.TrimPrefix(r.URL.Path, "/v1/allocation/"), JobID: "web", TaskGroup: "g", NodeName: "n"})
	}))
	defer srv.Close()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "nomad.token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := createDefaultConfig()
	cfg.Endpoint, cfg.TokenFile, cfg.CAFile = srv.URL, tokenFile, caFile
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := newResolver(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if info, ok := r.lookup(context.Background(), allocA); !ok || info.JobID != "web" {
		t.Errorf("lookup with the token and the CA: %+v %v", info, ok)
	}

	cfg.CAFile = ""
	r, err = newResolver(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.lookup(context.Background(), allocA); ok {
		t.Error("a certificate of an unknown CA was accepted")
	}
	cfg.CAFile = caFile
	cfg.TokenFile = filepath.Join(dir, "missing.token")
	if _, err := newResolver(cfg, zap.NewNop()); err == nil || !strings.Contains(err.Error(), "token_file") {
		t.Errorf("an unreadable token file: %v, want an error naming token_file", err)
	}
	cfg.Token = token
	if err := cfg.Validate(); err == nil {
		t.Error("token and token_file together were accepted")
	}
}
