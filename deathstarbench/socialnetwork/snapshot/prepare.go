package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/orchbench/orchbench/harness/dockerimg"
)

// PrepareOptions configure Prepare.
type PrepareOptions struct {
	Params Params
	// Tag is the deployment's image tag (the pack's image_tag).
	Tag   string
	Cache Cache
	// Remake makes the snapshot again even when the cache holds it.
	Remake      bool
	Concurrency int
	Docker      *client.Client
	Progress    func(line string)
}

// Prepared says what Prepare found and did.
type Prepared struct {
	// Images are the snapshot images, by store.
	Images map[Store]string
	// Refs are the images in the order of Stores.
	Refs []string
	// Made: the snapshot was made (no cached one, or Remake).
	Made bool
	// Built lists the images built from the cache.
	Built []string
	// Imported lists the images copied into the embedded Kubernetes node.
	Imported []string
	Manifest *Manifest
}

// Prepare makes sure the snapshot images of the tag exist and are current,
// doing only what is missing: nothing when they are, a build from the cache
// when only the archive is there, otherwise the snapshot itself first. When
// the embedded Kubernetes node is up, the images are copied into its
// containerd too. Concurrent calls for one snapshot wait for each other.
func Prepare(ctx context.Context, opts PrepareOptions) (Prepared, error) {
	out := Prepared{Images: map[Store]string{}}
	if err := opts.Params.Validate(); err != nil {
		return out, err
	}
	say := opts.Progress
	if say == nil {
		say = func(string) {}
	}
	unlock, err := lock(ctx, opts.Cache, opts.Params, say)
	if err != nil {
		return out, err
	}
	defer unlock()

	bases, err := checkBases(ctx, opts.Docker, opts.Tag)
	if err != nil {
		return out, err
	}
	m, err := opts.Cache.Lookup(opts.Params)
	if err != nil {
		return out, err
	}
	var stale []Store
	for _, s := range Stores {
		out.Images[s] = ImageRef(s, opts.Tag, opts.Params)
		out.Refs = append(out.Refs, out.Images[s])
		ok, err := imageCurrent(ctx, opts.Docker, s, opts.Tag, opts.Params, bases[s], m)
		if err != nil {
			return out, err
		}
		if !ok || opts.Remake {
			stale = append(stale, s)
		}
	}
	if len(stale) > 0 {
		if m == nil || opts.Remake {
			if m, err = Make(ctx, MakeOptions{Params: opts.Params, Tag: opts.Tag, Cache: opts.Cache,
				Concurrency: opts.Concurrency, Docker: opts.Docker, Progress: say}); err != nil {
				return out, fmt.Errorf("make snapshot %s: %w", opts.Params.Key(), err)
			}
			out.Made = true
			// an image still current held the files this snapshot replaces
			stale = Stores
		}
		out.Manifest = m
		for _, s := range stale {
			began := time.Now()
			if _, err := buildImage(ctx, opts.Docker, opts.Cache, s, opts.Tag, m, bases[s]); err != nil {
				return out, err
			}
			out.Built = append(out.Built, out.Images[s])
			say(fmt.Sprintf("built %s in %.1f s", out.Images[s], time.Since(began).Seconds()))
		}
	}
	node, up, err := dockerimg.EmbeddedNode()
	if err != nil || !up {
		return out, err
	}
	began := time.Now()
	if out.Imported, err = node.Sync(ctx, opts.Docker, out.Refs); err != nil {
		return out, fmt.Errorf("the embedded Kubernetes node: %w", err)
	}
	if len(out.Imported) > 0 {
		say(fmt.Sprintf("imported %v into the embedded Kubernetes node's containerd in %.1f s", out.Imported, time.Since(began).Seconds()))
	}
	return out, nil
}

// lock holds an exclusive lock on the snapshot's lock file: two sweeps
// making one snapshot would share container names and the cache entry.
func lock(ctx context.Context, cache Cache, p Params, say func(string)) (func(), error) {
	if err := os.MkdirAll(cache.Dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(cache.Dir, "."+p.Key()+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	lastSaid := began
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if time.Since(lastSaid) >= progressEvery {
			lastSaid = time.Now()
			say(fmt.Sprintf("waiting for another orchbench preparing snapshot %s (%s so far)", p.Key(), time.Since(began).Round(time.Second)))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
