package snapshot

import (
	"archive/tar"
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/client"

	"github.com/orchbench/orchbench/harness/dockerimg"
)

// Labels of images: the base images name the variable their entrypoint
// seeds from (cluster/images.sh); a snapshot image names its snapshot and
// the base it was built on, so a rebuilt base or a new format makes it stale.
const (
	labelSeedEnv      = "orchbench.seed-env"
	labelSnapshotKey  = "orchbench.snapshot.key"
	labelSnapshotMade = "orchbench.snapshot.made"
	labelBaseImage    = "orchbench.snapshot.base"
)

// madeLabel tells one making of a snapshot from another of the same key.
func madeLabel(m *Manifest) string { return m.Created.Format(time.RFC3339Nano) }

// seedDir is where a snapshot image keeps a store's files.
func seedDir(s Store) string { return "/seed/" + string(s) }

// baseImages are the images a deployment of tag runs.
type baseImages struct {
	socialnet, memcached, ferretdb, redis string
}

func baseImagesOf(tag string) baseImages {
	return baseImages{socialnet: "orchbench/socialnet:" + tag, memcached: "orchbench/memcached:" + tag,
		ferretdb: "orchbench/ferretdb:" + tag, redis: "orchbench/redis:" + tag}
}

func (b baseImages) store(s Store) string {
	switch s {
	case StoreFerretDB:
		return b.ferretdb
	case StoreRedis:
		return b.redis
	default:
		return b.memcached
	}
}

// ImageRef is the snapshot image of a store for a deployment of base tag
// (packs/social-network writes the same name).
func ImageRef(s Store, baseTag string, p Params) string {
	return "orchbench/" + string(s) + ":" + p.ImageTag(baseTag)
}

// checkBases requires every image of the tag, and a seed variable on the
// stores' images: an image from before seeding existed would start empty.
func checkBases(ctx context.Context, docker *client.Client, tag string) (map[Store]dockerimg.Image, error) {
	b := baseImagesOf(tag)
	stores := map[Store]dockerimg.Image{}
	for _, ref := range []string{b.socialnet, b.memcached, b.ferretdb, b.redis} {
		img, ok, err := dockerimg.Inspect(ctx, docker, ref)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("no image %s: build them with `IMAGE_TAG=%s ./justw images dsb`", ref, tag)
		}
		for _, s := range Stores {
			if ref == b.store(s) {
				if img.Labels[labelSeedEnv] == "" {
					return nil, fmt.Errorf("image %s cannot seed its data dir (no %s label): rebuild it with `IMAGE_TAG=%s ./justw images dsb`", ref, labelSeedEnv, tag)
				}
				stores[s] = img
			}
		}
	}
	return stores, nil
}

// imageCurrent reports whether the store's snapshot image holds this
// snapshot on the current base image; with a cached snapshot (m), the very
// one cached, since a snapshot made again replaces the files.
func imageCurrent(ctx context.Context, docker *client.Client, s Store, tag string, p Params, base dockerimg.Image, m *Manifest) (bool, error) {
	img, ok, err := dockerimg.Inspect(ctx, docker, ImageRef(s, tag, p))
	if err != nil || !ok {
		return false, err
	}
	if m != nil && img.Labels[labelSnapshotMade] != madeLabel(m) {
		return false, nil
	}
	return img.Labels[labelSnapshotKey] == p.Key() && img.Labels[labelBaseImage] == base.ID, nil
}

// buildImage builds the store's snapshot image from the cached archive on
// top of its base: the files under seedDir and the base's seed variable
// naming them.
func buildImage(ctx context.Context, docker *client.Client, cache Cache, s Store, tag string, m *Manifest, base dockerimg.Image) (string, error) {
	p := m.Params
	dockerfile := fmt.Sprintf("FROM %s\nCOPY seed %s\nENV %s=%s\nLABEL %s=%q %s=%q %s=%q\n",
		baseImagesOf(tag).store(s), seedDir(s), base.Labels[labelSeedEnv], seedDir(s),
		labelSnapshotKey, p.Key(), labelSnapshotMade, madeLabel(m), labelBaseImage, base.ID)
	return dockerimg.Build(ctx, docker, ImageRef(s, tag, p), dockerfile, func(tw *tar.Writer) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "seed/", Mode: 0o755}); err != nil {
			return err
		}
		return cache.copyArchive(p, s, tw, "seed")
	})
}
