// Package imageref points the project's images at a registry. Packs and
// jobs name them as the project's dockerd tags them (orchbench/taewa:local),
// which is right where the images were built or loaded; nodes that pull
// from a registry (the emulated cluster's client node, a real cluster's own)
// need registry/orchbench/taewa:local. One harness-wide setting rewrites
// every such reference, so no pack needs a variable of its own and a
// pack's --var image=... still wins for anything else it names.
package imageref

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// Env is the environment variable the CLI reads the registry from.
const Env = "ORCHBENCH_REGISTRY"

// ProjectPrefix is what the project's own images are named under.
const ProjectPrefix = "orchbench/"

// Registry is a registry's host:port ("" for none: images as they are).
type Registry string

// registryRE is host[:port] with no scheme or path: what docker puts
// before the first slash of a reference.
var registryRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$`)

// ParseRegistry checks a registry setting, naming where it came from.
func ParseRegistry(s, from string) (Registry, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if !registryRE.MatchString(s) {
		return "", fmt.Errorf("%s = %q: a registry's host:port is needed (e.g. 10.77.0.10:5000), with no scheme or path", from, s)
	}
	return Registry(s), nil
}

// Ref is the reference a node pulls: the registry's copy of a project
// image, any other reference unchanged.
func (r Registry) Ref(image string) string {
	if r == "" || !strings.HasPrefix(image, ProjectPrefix) {
		return image
	}
	return string(r) + "/" + image
}

// Rewrite points every docker task's project image at the registry.
func (r Registry) Rewrite(jobs []*api.Job) {
	if r == "" {
		return
	}
	for _, job := range jobs {
		for _, g := range job.TaskGroups {
			for _, t := range g.Tasks {
				if img, ok := t.Config["image"].(string); ok {
					t.Config["image"] = r.Ref(img)
				}
			}
		}
	}
}
