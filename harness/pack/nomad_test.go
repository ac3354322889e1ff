package pack

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

func TestParseJobsSaysWhetherNomadRejectedOrWasUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "1 error occurred: job: missing datacenters", http.StatusBadRequest)
	}))
	defer srv.Close()
	r := mustRender(t, loadFixture(t, "features"), nil)
	for addr, want := range map[string]string{
		srv.URL:              "rejected the job rendered from testdata/features/templates/features.nomad.tpl",
		"http://127.0.0.1:1": "cannot reach Nomad at http://127.0.0.1:1 (set NOMAD_ADDR)",
	} {
		c, err := api.NewClient(&api.Config{Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&Nomad{Client: c}).ParseJobs(r)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", addr, err, want)
		}
	}
}
