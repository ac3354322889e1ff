// Package snapshot makes a loaded social network's datastore files once and
// restores them into fresh deployments, so a deployment starts with its
// dataset instead of spending a quarter of an hour on the HTTP loader.
//
// A snapshot is made by running the stores and the services from the very
// images a deployment runs (so the files are written by the binaries that
// will read them), loading the dataset through the API with dataset.Load,
// stopping the stores cleanly and archiving their data directories (and a
// dump of memcached's items) into a cache keyed by the dataset's parameters
// and the storage format. Restoring it builds, on top of the deployment's
// FerretDB, Redis and memcached images, images that carry the files and a
// seed variable; their entrypoints copy the files into the empty data
// directory at start (memcached: set the items once). Images are what
// Nomad, Swarm and Kubernetes all run, so one mechanism serves the three,
// before any datastore starts, and a restarted task keeps its own data.
package snapshot

import (
	"fmt"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
)

// FormatVersion names what the stored files mean: bump it whenever the
// services store the dataset differently (document shapes, key names, user
// IDs, which store holds what) or the loader makes a different dataset, so
// every cached snapshot and every snapshot image is made again rather than
// restored into services that read it otherwise.
//
//	1: users 1..N, user timelines in Redis only
//	2: users 0..N-1, user timelines in Redis and MongoDB
//	3: an author's MongoDB timeline as post_ids/timestamps arrays; posts
//	   cached in memcached in Thrift's binary encoding, not JSON
const FormatVersion = 3

// Params are what a snapshot's content follows from.
type Params struct {
	Users        int    `json:"users"`
	PostsPerUser int    `json:"posts_per_user"`
	Seed         uint64 `json:"seed"`
}

// DefaultParams is the pack's default dataset: socfb-Reed98's size.
func DefaultParams() Params {
	return Params{Users: dataset.Reed98Users, PostsPerUser: 10, Seed: dataset.DefaultSeed}
}

// Validate refuses parameters the loader cannot make a dataset of.
func (p Params) Validate() error {
	if p.Users < 2 {
		return fmt.Errorf("a snapshot needs at least 2 users, got %d", p.Users)
	}
	if p.PostsPerUser < 1 {
		return fmt.Errorf("a snapshot needs at least 1 post per user (the verifier expects every timeline to hold posts), got %d", p.PostsPerUser)
	}
	return nil
}

// Key names the snapshot in the cache and in image labels: every parameter
// and the format, readable, so `ls` of the cache says what each holds.
func (p Params) Key() string { return p.keyFor(FormatVersion) }

func (p Params) keyFor(format int) string {
	return fmt.Sprintf("u%d-p%d-s%d-f%d", p.Users, p.PostsPerUser, p.Seed, format)
}

// ImageTag is the tag of a snapshot image made on base tag: the dataset
// parameters without the format, which the image's label carries instead.
// The pack writes the same name (packs/social-network, checked by
// harness/pack's tests); prepare remakes an image whose label names another
// format, so a new format needs no change to the pack.
func (p Params) ImageTag(baseTag string) string {
	return fmt.Sprintf("%s-ds-u%d-p%d-s%d", baseTag, p.Users, p.PostsPerUser, p.Seed)
}
