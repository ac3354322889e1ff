package servicecmd

import (
	"flag"
	"slices"
	"strings"
	"testing"
)

var testPort = Port{
	Binary:         "demo",
	Services:       []string{"backend", "frontend", "store-reader"},
	Frontend:       "frontend",
	FrontendListen: ":8080",
	ServiceListen:  ":9090",
	AddrEnv:        func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) + "_ADDR" },
}

func parse(t *testing.T, args ...string) *Flags {
	t.Helper()
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	f := testPort.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSelectionPicksServicesAndAddresses(t *testing.T) {
	t.Setenv("PORT", "")
	t.Setenv("STORE_READER_ADDR", "10.0.0.2:9090")
	cases := []struct {
		args      []string
		names     []string
		listen    map[string]string
		wantError string
	}{
		{[]string{"--service", "all"}, testPort.Services, map[string]string{"frontend": ":8080"}, ""},
		{[]string{"--service", "all", "--listen-addr", "127.0.0.1:1"}, testPort.Services, map[string]string{"frontend": "127.0.0.1:1"}, ""},
		{[]string{"--service", "backend"}, []string{"backend"}, map[string]string{"backend": ":9090"}, ""},
		{[]string{"--service", "frontend"}, []string{"frontend"}, map[string]string{"frontend": ":8080"}, ""},
		{nil, nil, nil, "--service is required (one of backend, frontend, store-reader, or all)"},
		{[]string{"--service", "nope"}, nil, nil, `--service "nope": want one of`},
	}
	for _, c := range cases {
		f := parse(t, c.args...)
		names, listen, err := testPort.Selection(f)
		if c.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantError) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.wantError)
			}
			continue
		}
		if err != nil || !slices.Equal(names, c.names) || len(listen) != len(c.listen) {
			t.Errorf("%v: %v %v %v", c.args, names, listen, err)
		}
		for name, addr := range c.listen {
			if listen[name] != addr {
				t.Errorf("%v: %s listens on %q, want %q", c.args, name, listen[name], addr)
			}
		}
	}
	f := parse(t, "--backend-addr", "10.0.0.1:9090")
	if got := f.UpstreamAddrs(); got["backend"] != "10.0.0.1:9090" || got["store-reader"] != "10.0.0.2:9090" || len(got) != 2 {
		t.Errorf("upstream addresses from flag and environment: %v", got)
	}
	t.Setenv("PORT", "7000")
	if _, listen, _ := testPort.Selection(parse(t, "--service", "backend")); listen["backend"] != ":7000" {
		t.Errorf("with PORT set: %v", listen)
	}
	if _, err := parse(t, "--log-level", "loud").Logger(); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("a bad log level: %v", err)
	}
}
