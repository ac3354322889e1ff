package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
)

func execLoad(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newLoadCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestLoadRefusesScriptAndWorkload(t *testing.T) {
	_, err := execLoad(t, "-R", "10", "-s", "x.lua", "-w", "get-paths:/a", "http://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), "one or the other") {
		t.Fatalf("want a refusal, got %v", err)
	}
}

func TestLoadUnknownWorkloadListsNames(t *testing.T) {
	_, err := execLoad(t, "-R", "10", "-w", "nosuch", "http://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), "get-paths") {
		t.Fatalf("want the registered names, got %v", err)
	}
}

func TestLoadHostsAndWorkload(t *testing.T) {
	var hits [2]atomic.Int64
	var paths [2]atomic.Int64
	var srv [2]*httptest.Server
	for i := range srv {
		srv[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			if r.URL.Path == "/b" {
				paths[1].Add(1)
			} else if r.URL.Path == "/a" {
				paths[0].Add(1)
			}
			w.Write([]byte("ok"))
		}))
		defer srv[i].Close()
	}
	hosts := strings.TrimPrefix(srv[0].URL, "http://") + "," + strings.TrimPrefix(srv[1].URL, "http://")
	out, err := execLoad(t, "-t1", "-c2", "-d1s", "-R100", "--json", "-w", "get-paths:/a,/b", "--hosts", hosts, srv[0].URL)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res loadgen.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || hits[0].Load() == 0 || hits[1].Load() == 0 {
		t.Fatalf("requests %d, per host %d/%d", res.Requests, hits[0].Load(), hits[1].Load())
	}
	if paths[0].Load() == 0 || paths[1].Load() == 0 || paths[0].Load()+paths[1].Load() != hits[0].Load()+hits[1].Load() {
		t.Fatalf("paths /a %d, /b %d", paths[0].Load(), paths[1].Load())
	}
	if len(res.Config.Hosts) != 2 || res.Config.Workload != "get-paths:/a,/b" {
		t.Fatalf("config echo %+v", res.Config)
	}
}
