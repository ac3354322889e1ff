package imageref

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

func TestRewrite(t *testing.T) {
	task := func(img string) *api.Task { return &api.Task{Name: img, Config: map[string]any{"image": img}} }
	job := &api.Job{TaskGroups: []*api.TaskGroup{{Tasks: []*api.Task{task("orchbench/taewa:local"), task("postgres:15"), {Name: "exec", Config: map[string]any{"command": "node"}}}}}}
	Registry("10.77.0.10:5000").Rewrite([]*api.Job{job})
	ts := job.TaskGroups[0].Tasks
	if got := ts[0].Config["image"]; got != "10.77.0.10:5000/orchbench/taewa:local" {
		t.Errorf("project image: %v", got)
	}
	if got := ts[1].Config["image"]; got != "postgres:15" {
		t.Errorf("another image was rewritten: %v", got)
	}
	if _, ok := ts[2].Config["image"]; ok {
		t.Error("an image was added to a task without one")
	}
	Registry("").Rewrite([]*api.Job{job})
	if got := ts[0].Config["image"]; got != "10.77.0.10:5000/orchbench/taewa:local" {
		t.Errorf("no registry changed the image: %v", got)
	}
}

func TestParseRegistry(t *testing.T) {
	for _, ok := range []string{"", "10.77.0.10:5000", "registry.example.org", "reg:443"} {
		if _, err := ParseRegistry(ok, "--registry"); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://10.77.0.10:5000", "10.77.0.10:5000/orchbench", "host:port"} {
		if _, err := ParseRegistry(bad, "--registry"); err == nil || !strings.Contains(err.Error(), "--registry = ") {
			t.Errorf("%q: want an error naming --registry, got %v", bad, err)
		}
	}
}
