package conformance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
)

func ptr[T any](v T) *T { return &v }

// A job of several groups whose measured service no group registers has
// no front end placement could hold on its worker.
func TestPlacementNeedsTheFrontEnd(t *testing.T) {
	shapeOf := func(registered string) shape {
		job := &api.Job{ID: ptr("app"), Meta: map[string]string{contract.KeyService: "app-front"}}
		for _, g := range []string{"front", "db"} {
			name := "app-" + g
			if g == "front" {
				name = registered
			}
			job.TaskGroups = append(job.TaskGroups, &api.TaskGroup{Name: ptr(g), Services: []*api.Service{{Name: name}}})
		}
		return shape{where: "defaults", jobs: []*api.Job{job}, apps: []contract.App{{Job: "app", Service: "app-front"}}}
	}
	var found []string
	add := func(where, format string, args ...any) {
		found = append(found, where+": "+fmt.Sprintf(format, args...))
	}
	checkPlacement(shapeOf("app-front"), add)
	if len(found) != 0 {
		t.Fatalf("a job with its front end registered: %q", found)
	}
	checkPlacement(shapeOf("app-web"), add)
	if len(found) == 0 || !strings.Contains(strings.Join(found, "\n"), `no group registers the measured service "app-front"`) {
		t.Fatalf("a front end nothing registers: %q", found)
	}
}
