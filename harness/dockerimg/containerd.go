package dockerimg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"

	"github.com/moby/moby/client"
)

// EmbeddedContainerd is the socket of the embedded Kubernetes node's
// containerd (cluster/kubernetes.sh, $run); it exists while that cluster
// is up. Its pods never pull: an image must be imported before it is used.
const EmbeddedContainerd = "/run/orchbench-k8s/containerd.sock"

// containerdNamespace is the namespace the kubelet's CRI looks in.
const containerdNamespace = "k8s.io"

// Containerd is a containerd reached through its ctr CLI.
type Containerd struct {
	Socket string
}

// EmbeddedNode is the embedded Kubernetes node's containerd, or ok false
// when that cluster is not up.
func EmbeddedNode() (Containerd, bool, error) {
	_, err := os.Stat(EmbeddedContainerd)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Containerd{}, false, nil
	case err != nil:
		return Containerd{}, false, err
	}
	return Containerd{Socket: EmbeddedContainerd}, true, nil
}

func (cd Containerd) ctr(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ctr", append([]string{"-a", cd.Socket, "-n", containerdNamespace}, args...)...)
}

// normalized is the name containerd keeps a Docker Hub-style ref under.
func normalized(ref string) string {
	first, _, hasSlash := strings.Cut(ref, "/")
	switch {
	case !hasSlash:
		return "docker.io/library/" + ref
	case strings.ContainsAny(first, ".:") || first == "localhost":
		return ref
	default:
		return "docker.io/" + ref
	}
}

// configDigest is the config digest of ref's manifest in containerd (the
// Docker image ID of the same image), or "" when containerd has no ref.
func (cd Containerd) configDigest(ctx context.Context, ref string) (string, error) {
	out, err := cd.ctr(ctx, "images", "ls", "name=="+normalized(ref)).Output()
	if err != nil {
		return "", fmt.Errorf("ctr images ls: %w", exitText(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		return "", nil
	}
	// REF TYPE DIGEST SIZE PLATFORMS LABELS
	fields := strings.Fields(lines[1])
	if len(fields) < 3 {
		return "", fmt.Errorf("ctr images ls: unexpected line %q", lines[1])
	}
	manifest, err := cd.ctr(ctx, "content", "get", fields[2]).Output()
	if err != nil {
		return "", fmt.Errorf("ctr content get %s: %w", fields[2], exitText(err))
	}
	var m struct {
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		// an index, not a manifest: treat as different, so it is imported again
		return "", nil
	}
	return m.Config.Digest, nil
}

// Sync imports every ref whose Docker image containerd lacks or holds in
// another version, and returns the refs it imported.
func (cd Containerd) Sync(ctx context.Context, c *client.Client, refs []string) ([]string, error) {
	var stale []string
	for _, ref := range refs {
		img, ok, err := Inspect(ctx, c, ref)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("no image %s in docker to import into containerd", ref)
		}
		have, err := cd.configDigest(ctx, ref)
		if err != nil {
			return nil, err
		}
		if have != img.ID {
			stale = append(stale, ref)
		}
	}
	if len(stale) == 0 {
		return nil, nil
	}
	saved, err := c.ImageSave(ctx, stale)
	if err != nil {
		return nil, fmt.Errorf("docker save %s: %w", strings.Join(stale, " "), err)
	}
	defer saved.Close()
	cmd := cd.ctr(ctx, "images", "import", "-")
	cmd.Stdin = saved
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ctr images import %s: %w: %s", strings.Join(stale, " "), err, strings.TrimSpace(out.String()))
	}
	return stale, nil
}

func exitText(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}
