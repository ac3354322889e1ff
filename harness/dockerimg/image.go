// Package dockerimg is what the harness does with the local Docker daemon
// beyond an orchestrator's own work: inspect and build images, run a
// short-lived container on the host network, and copy images into the
// embedded Kubernetes node's containerd. There is no registry: every image
// is built here and used where it was built.
package dockerimg

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Connect reaches the daemon given by DOCKER_HOST, else the local socket.
func Connect() (*client.Client, error) {
	c, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return c, nil
}

// Image is what the harness reads of an image.
type Image struct {
	ID     string
	Labels map[string]string
	Env    []string
}

// Inspect returns the image ref names, or ok false when there is none.
func Inspect(ctx context.Context, c *client.Client, ref string) (img Image, ok bool, err error) {
	res, err := c.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		return img, false, nil
	}
	if err != nil {
		return img, false, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	img.ID = res.ID
	if res.Config != nil {
		img.Labels, img.Env = res.Config.Labels, res.Config.Env
	}
	return img, true, nil
}

// Build builds ref from a Dockerfile and the files add writes into the
// build context (paths relative to the context), and returns its ID. The
// context streams, so a large dataset is never held in memory.
func Build(ctx context.Context, c *client.Client, ref, dockerfile string, add func(*tar.Writer) error) (string, error) {
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))})
		if err == nil {
			_, err = io.WriteString(tw, dockerfile)
		}
		if err == nil {
			err = add(tw)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	res, err := c.ImageBuild(ctx, pr, client.ImageBuildOptions{Tags: []string{ref}, Remove: true, ForceRemove: true})
	if err != nil {
		pr.CloseWithError(err)
		return "", fmt.Errorf("build %s: %w", ref, err)
	}
	defer res.Body.Close()
	if err := readBuildStream(res.Body); err != nil {
		return "", fmt.Errorf("build %s: %w", ref, err)
	}
	img, ok, err := Inspect(ctx, c, ref)
	if err == nil && !ok {
		err = errors.New("the daemon reported success but has no such image")
	}
	return img.ID, err
}

// readBuildStream reads the daemon's JSON messages to the end; a build
// fails by a message, not by a status code.
func readBuildStream(r io.Reader) error {
	var last bytes.Buffer
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		err := dec.Decode(&msg)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if msg.Error != "" || msg.ErrorDetail.Message != "" {
			return fmt.Errorf("%s%s (output before: %q)", msg.Error, msg.ErrorDetail.Message, last.String())
		}
		if msg.Stream != "" {
			last.Reset()
			last.WriteString(msg.Stream)
		}
	}
}
