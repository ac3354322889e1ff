package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/snapshot"
	"github.com/orchbench/orchbench/harness/dockerimg"
)

// snapshotFlags name a snapshot and the images that make and carry it.
type snapshotFlags struct {
	params      snapshot.Params
	tag         string
	concurrency int
	timeout     time.Duration
}

func (f *snapshotFlags) register(cmd *cobra.Command) {
	def := snapshot.DefaultParams()
	cmd.Flags().IntVar(&f.params.Users, "users", def.Users, "user count (edges scale with it)")
	cmd.Flags().IntVar(&f.params.PostsPerUser, "posts-per-user", def.PostsPerUser, "mean posts per user")
	cmd.Flags().Uint64Var(&f.params.Seed, "seed", def.Seed, "seed of the graph and the posts")
	cmd.Flags().StringVar(&f.tag, "image-tag", "local", "tag of the orchbench/{socialnet,ferretdb,redis,memcached} images (the pack's image_tag)")
	// At 32 in flight on two cores, composes failed on FerretDB's write lock
	// (SQLITE_BUSY on the user timelines' documents); 16 loaded without a
	// failure, 8 took half as long again.
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 16, "loader requests in flight while making a snapshot")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 45*time.Minute, "give up after this long")
}

// run calls fn with a context bounded by the timeout and ended by SIGINT or
// SIGTERM (the stack's containers are removed either way), a docker client,
// the cache and a progress printer stamping each line with the time spent.
func (f *snapshotFlags) run(cmd *cobra.Command, fn func(ctx context.Context, opts snapshot.PrepareOptions) error) error {
	cache, err := snapshot.DefaultCache()
	if err != nil {
		return err
	}
	docker, err := dockerimg.Connect()
	if err != nil {
		return err
	}
	defer docker.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	return fn(ctx, snapshot.PrepareOptions{Params: f.params, Tag: f.tag, Cache: cache, Concurrency: f.concurrency,
		Docker: docker, Progress: stamped(cmd.OutOrStdout(), time.Now())})
}

// stamped prints progress lines with the time since began.
func stamped(w io.Writer, began time.Time) func(string) {
	return func(line string) { fmt.Fprintf(w, "[%6.1fs] %s\n", time.Since(began).Seconds(), line) }
}

func newDSBSnapshotCmd() *cobra.Command {
	var f snapshotFlags
	var force bool
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Load the dataset once into local stores and keep their files in the snapshot cache",
		Long: `Runs FerretDB, Redis, memcached and the services from the orchbench/*:<image-tag>
images on loopback without resource limits, loads the dataset through the API
(as dsb social-network load does), waits for the social graph's queued
writes, verifies it, dumps memcached's items, stops the stores cleanly and
archives their files into
$ORCHBENCH_CACHE/snapshots/<key> (default ~/.cache/orchbench), the key
naming users, posts per user, seed and the storage format. A cached snapshot
is kept unless --force. restore turns it into images.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, opts snapshot.PrepareOptions) error {
				out := cmd.OutOrStdout()
				if m, err := opts.Cache.Lookup(opts.Params); err != nil || (m != nil && !force) {
					if m != nil {
						fmt.Fprintf(out, "snapshot %s is cached (made %s in %.0f s); --force makes it again\n", m.Key, m.Created.Format(time.RFC3339), m.MakeSeconds)
					}
					return err
				}
				m, err := snapshot.Make(ctx, snapshot.MakeOptions{Params: opts.Params, Tag: opts.Tag, Cache: opts.Cache,
					Concurrency: opts.Concurrency, Docker: opts.Docker, Progress: opts.Progress})
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "snapshot %s made in %.0f s (load %.0f s): %d users, %d follows, %d posts, in %s\n",
					m.Key, m.MakeSeconds, m.LoadSeconds, m.Loaded.Users, m.Loaded.Follows, m.Loaded.Posts, opts.Cache.Dir)
				return nil
			})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&force, "force", false, "make the snapshot again even when it is cached")
	return cmd
}

func newDSBRestoreCmd() *cobra.Command {
	var f snapshotFlags
	var remake bool
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Make sure the dataset-snapshot images of the FerretDB, Redis and memcached tasks exist (the pack's prepare hook)",
		Long: `Makes sure orchbench/ferretdb:<image-tag>-ds-u<users>-p<posts>-s<seed> and
its Redis and memcached twins exist and carry the snapshot on the current
base images, doing
only what is missing: nothing when they do, a build from the cached snapshot
when that is there (seconds), otherwise the snapshot first (minutes; see
snapshot). When the embedded Kubernetes node is up, the images are imported
into its containerd too. A deployment of these images starts with the
dataset: FerretDB and Redis copy the files into their empty data dirs at
start, memcached is sent the items the load left in it. The harness runs
this before deploying (orchbench_prepare_args).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, opts snapshot.PrepareOptions) error {
				opts.Remake = remake
				began := time.Now()
				p, err := snapshot.Prepare(ctx, opts)
				if err != nil {
					return err
				}
				state := "current"
				switch {
				case p.Made:
					state = "made the snapshot and built"
				case len(p.Built) > 0:
					state = "built from the cached snapshot"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "images %s: %s in %.1f s\n", strings.Join(p.Refs, ", "), state, time.Since(began).Seconds())
				return nil
			})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&remake, "remake", false, "make the snapshot and the images again even when current")
	return cmd
}
