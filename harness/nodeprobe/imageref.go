package nodeprobe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// imageRefOf is how a parity table can tell two runtimes ran the same
// image: for an image pulled from a registry, its repository digest
// ("10.77.0.10:5000/orchbench/taewa@sha256:…", the manifest's digest, the
// one Kubernetes reports for a pulled image); else Docker's image ID (the
// config's digest, which is what Kubernetes reports for an imported one).
// The two digests of one image differ, so a Docker node that pulled the
// image must report the manifest's too, or every image on many nodes
// reads as a mismatch.
func imageRefOf(rec dockerRecord) string {
	if rec.Image == "" {
		return ""
	}
	repo := repositoryOf(rec.Config.Image)
	if repo == "" {
		return rec.Image
	}
	files, _ := filepath.Glob(filepath.Join(DockerRoot, "image", "*", "repositories.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		var store struct {
			Repositories map[string]map[string]string
		}
		if json.Unmarshal(b, &store) != nil {
			continue
		}
		for name, refs := range store.Repositories {
			if name != repo && name != "docker.io/"+repo && name != "docker.io/library/"+repo {
				continue
			}
			for ref, id := range refs {
				if id == rec.Image && strings.Contains(ref, "@sha256:") {
					return ref
				}
			}
		}
	}
	return rec.Image
}

// repositoryOf is an image reference without its tag or digest:
// "10.77.0.10:5000/orchbench/taewa:local" is "10.77.0.10:5000/orchbench/taewa".
func repositoryOf(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		ref = ref[:colon]
	}
	return ref
}
