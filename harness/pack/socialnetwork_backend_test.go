package pack

import (
	"strings"
	"testing"
)

func TestSocialNetworkFerretDBBackend(t *testing.T) {
	sqlite := mustRenderSocial(t, map[string]string{"variant": "unlimited"})
	if _, ok := sqlite.tasks["postgres"]; ok {
		t.Error("the default sqlite backend runs a postgres task")
	}
	if f := sqlite.tasks["ferretdb"]; f.hasTemplate {
		t.Errorf("ferretdb on sqlite discovers something: %q", f.templateData)
	}
	if sqlite.meta["orchbench_prepare_args"] == "" {
		t.Error("the sqlite backend lost the dataset snapshot")
	}

	pg := mustRenderSocial(t, map[string]string{"variant": "unlimited", "ferretdb_backend": "postgresql", "postgres_password": "p@ss word"})
	if len(pg.tasks) != 16 {
		t.Errorf("want 12 services + postgres, ferretdb, redis, memcached, got %d groups", len(pg.tasks))
	}
	postgres, ok := pg.tasks["postgres"]
	if !ok {
		t.Fatal("ferretdb_backend = postgresql runs no postgres task")
	}
	if postgres.meta["orchbench_role"] != "datastore" || postgres.memory < 1024 || postgres.serviceName != pg.name+"-postgres" {
		t.Errorf("postgres task: %+v", postgres)
	}
	url := pg.tasks["ferretdb"].templateData
	if !strings.Contains(url, "FERRETDB_POSTGRESQL_URL=postgres://ferretdb:p%40ss+word@") || !strings.Contains(url, `service "`+pg.name+`-postgres|any"`) {
		t.Errorf("ferretdb's PostgreSQL URL template: %q", url)
	}
	// A snapshot carries SQLite files: PostgreSQL is loaded through the API.
	if pg.meta["orchbench_prepare_args"] != "" || !strings.Contains(pg.meta["orchbench_setup_args"], `"load"`) {
		t.Errorf("postgresql backend: prepare %q, setup %q", pg.meta["orchbench_prepare_args"], pg.meta["orchbench_setup_args"])
	}

	external := mustRenderSocial(t, map[string]string{"ferretdb_backend": "postgresql", "mongodb_uri": "mongodb://127.0.0.1:27017/"})
	if _, ok := external.tasks["postgres"]; ok {
		t.Error("with mongodb_uri there is no FerretDB, so no postgres either")
	}
}

func TestSocialNetworkRejectsAnUnknownFerretDBBackend(t *testing.T) {
	_, err := renderSocial(t, map[string]string{"ferretdb_backend": "mysql"})
	if err == nil || !strings.Contains(err.Error(), `unknown ferretdb_backend "mysql"; valid backends are: sqlite, postgresql`) {
		t.Fatalf("ferretdb_backend=mysql: %v", err)
	}
}
