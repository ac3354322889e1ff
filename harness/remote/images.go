package remote

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/moby/client"
)

// PushImages copies images from this machine's dockerd (NODES_DOCKER_HOST,
// else its socket) into the registry on the client host: each is loaded
// into the client host's engine (TLS) and pushed from there, the engine
// showing its certificate to the registry; every host then pulls it as
// CLIENT:5000/IMAGE, which ORCHBENCH_REGISTRY makes the packs name.
func PushImages(ctx context.Context, inv *Inventory, images []string, out io.Writer) error {
	docker := DockerPKI{Dir: filepath.Join(inv.StateDir, "tls", "docker")}
	if _, err := os.Stat(docker.CA()); err != nil {
		return fmt.Errorf("no cluster for %s yet (orchbench remote up first): %w", inv.Path, err)
	}
	localHost := os.Getenv("NODES_DOCKER_HOST")
	if localHost == "" {
		localHost = "unix:///var/run/docker.sock"
	}
	src, err := client.New(client.WithHost(localHost))
	if err != nil {
		return err
	}
	defer src.Close()
	ch := inv.Clients()[0]
	dst, err := client.New(client.WithHost("tcp://"+net.JoinHostPort(ch.Address, dockerPort)),
		client.WithTLSClientConfig(filepath.Join(docker.CertPath(), "ca.pem"), filepath.Join(docker.CertPath(), "cert.pem"), filepath.Join(docker.CertPath(), "key.pem")))
	if err != nil {
		return err
	}
	defer dst.Close()
	registry := net.JoinHostPort(ch.Address, registryPort)
	for _, img := range images {
		t0 := time.Now()
		if _, err := src.ImageInspect(ctx, img); err != nil {
			return fmt.Errorf("image %s is not in this machine's dockerd (%s): build it first (just images ...): %w", img, localHost, err)
		}
		saved, err := src.ImageSave(ctx, []string{img})
		if err != nil {
			return fmt.Errorf("docker save %s: %w", img, err)
		}
		loaded, err := dst.ImageLoad(ctx, saved)
		if err == nil {
			_, err = io.Copy(io.Discard, loaded)
			loaded.Close()
		}
		saved.Close()
		if err != nil {
			return fmt.Errorf("loading %s into %s's engine: %w", img, ch.Name, err)
		}
		target := registry + "/" + img
		if _, err := dst.ImageTag(ctx, client.ImageTagOptions{Source: img, Target: target}); err != nil {
			return fmt.Errorf("tagging %s on %s: %w", target, ch.Name, err)
		}
		// the registry wants no credentials, only the engine's certificate;
		// the engine wants some header, and "{}" is none
		push, err := dst.ImagePush(ctx, target, client.ImagePushOptions{RegistryAuth: "e30="})
		if err == nil {
			err = push.Wait(ctx)
		}
		if err != nil {
			return fmt.Errorf("pushing %s from %s: %w", target, ch.Name, err)
		}
		fmt.Fprintf(out, "[remote] pushed %s: pull it as %s (%.1f s)\n", img, target, time.Since(t0).Seconds())
	}
	return nil
}
