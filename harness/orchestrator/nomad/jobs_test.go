package nomad

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/pack"
)

func TestParseJobsSaysWhetherNomadRejectedOrWasUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "1 error occurred: job: missing datacenters", http.StatusBadRequest)
	}))
	defer srv.Close()
	wd, _ := os.Getwd()
	p, err := pack.Load("../../pack/testdata/features")
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]string{
		srv.URL:              "rejected the job rendered from " + filepath.Join(wd, "../../pack/testdata/features/templates/features.nomad.tpl"),
		"http://127.0.0.1:1": "cannot reach Nomad at http://127.0.0.1:1 (set NOMAD_ADDR)",
	} {
		c, err := api.NewClient(&api.Config{Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&Orchestrator{Client: c}).ParseJobs(r)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", addr, err, want)
		}
	}
}
