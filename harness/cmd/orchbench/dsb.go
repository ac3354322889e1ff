package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
)

// The dsb command prepares and checks DeathStarBench applications that the
// packs deploy; load generation itself is `orchbench load`.
func init() {
	dsb := &cobra.Command{Use: "dsb", Short: "DeathStarBench applications: dataset loading and checks"}
	social := &cobra.Command{Use: "social-network", Short: "The social network: load its social graph and posts, verify timelines, snapshot and restore its stores"}
	social.AddCommand(newDSBLoadCmd(), newDSBVerifyCmd(), newDSBSnapshotCmd(), newDSBRestoreCmd())
	dsb.AddCommand(social, newDSBHotelCmd(), newDSBMediaCmd())
	rootCmd.AddCommand(dsb)
}

// checkFrontend refuses targets off this machine unless allowed, as
// `orchbench load` does, so a typo cannot send a load at someone else.
func checkFrontend(frontend string, allowRemote bool) error {
	u, err := url.Parse(frontend)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("--frontend %q is not an http(s) URL", frontend)
	}
	if allowRemote {
		return nil
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--frontend %s is not a loopback address; pass --allow-remote to target it", host)
}

func newDSBLoadCmd() *cobra.Command {
	var (
		frontend     string
		users        int
		postsPerUser int
		concurrency  int
		seed         uint64
		timeout      time.Duration
		allowRemote  bool
	)
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Register users, follow along a generated Reed98-sized graph, compose posts",
		Long: `Builds the seeded social graph (962 users and 18,812 friendships by default,
the size of DeathStarBench's socfb-Reed98), registers users 0..N-1, follows both
ways along each friendship and composes posts with mentions, URLs and media,
all through the front end's HTTP API. Each phase prints its count, rate and
ETA every 10 s while it runs. Re-running skips registered users and users who
already have posts.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFrontend(frontend, allowRemote); err != nil {
				return err
			}
			graph, err := dataset.Generate(users, dataset.EdgesFor(users), seed)
			if err != nil {
				return err
			}
			stats := graph.Stats()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "graph: %d users, %d friendships (degree min %d, median %d, mean %.1f, max %d), seed %d\n",
				graph.Users, len(graph.Edges), stats.Min, stats.Median, stats.Mean, stats.Max, seed)

			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			started := time.Now()
			result, err := dataset.Load(ctx, dataset.LoadOptions{
				Frontend:     frontend,
				Graph:        graph,
				PostsPerUser: postsPerUser,
				Concurrency:  concurrency,
				Seed:         seed,
				Progress:     func(line string) { fmt.Fprintln(out, line) },
			})
			for _, phase := range []struct {
				name   string
				result dataset.PhaseResult
			}{{"register", result.Register}, {"follow", result.Follow}, {"compose", result.Compose}} {
				for _, message := range phase.result.FirstErrors {
					fmt.Fprintf(out, "  %s error: %s\n", phase.name, message)
				}
			}
			fmt.Fprintf(out, "loaded in %s, %d failed requests\n", time.Since(started).Round(time.Millisecond), result.Failed())
			if err != nil {
				return err
			}
			if result.Failed() > 0 {
				return fmt.Errorf("%d requests failed", result.Failed())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&frontend, "frontend", "http://127.0.0.1:8080", "front end base URL")
	cmd.Flags().IntVar(&users, "users", dataset.Reed98Users, "user count (edges scale with it)")
	cmd.Flags().IntVar(&postsPerUser, "posts-per-user", 10, "mean posts per user (each gets 1..2×mean−1); 0 for none")
	cmd.Flags().IntVar(&concurrency, "concurrency", 32, "requests in flight")
	cmd.Flags().Uint64Var(&seed, "seed", dataset.DefaultSeed, "seed of the graph and the posts")
	cmd.Flags().DurationVar(&timeout, "timeout", 60*time.Minute, "give up after this long")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a front end that is not on loopback")
	return cmd
}

func newDSBVerifyCmd() *cobra.Command {
	var (
		frontend    string
		users       int
		samples     int
		seed        uint64
		datasetSeed uint64
		allowRemote bool
	)
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Read sampled timelines; fail unless each holds what a finished load leaves, every post field present",
		Long: `Reads the user and home timelines of sampled users 0..N-1. After a finished
load every user has composed at least one post and follows each friend, so
a user timeline must hold a post and a home timeline one per friend in the
seeded graph (read up to 50). Home timelines live only in Redis: a flushed or
restarted Redis, or a load stopped before every user composed, fails here. A
read answered LOADING (a Redis still reading its snapshot) is tried again for
up to 2 minutes first. Problems are
printed one per line as "problem: ..." and make the exit status non-zero;
the sweep runs this (orchbench_verify_args) before measuring a reused
deployment.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFrontend(frontend, allowRemote); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
			defer cancel()
			result, err := dataset.Verify(ctx, dataset.VerifyOptions{Frontend: frontend, Users: users, Samples: samples, Seed: seed, DatasetSeed: datasetSeed})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "read %d timelines, %d posts (%d with mentions, %d with URLs, %d with media)\n",
				result.TimelinesRead, result.PostsChecked, result.PostsWithMentions, result.PostsWithURLs, result.PostsWithMedia)
			if result.WaitedForLoading > 0 {
				fmt.Fprintf(out, "waited %s for a store still loading its data (LOADING)\n", result.WaitedForLoading)
			}
			for _, problem := range result.Problems {
				fmt.Fprintln(out, "problem:", problem)
			}
			if !result.OK() {
				return fmt.Errorf("%d problems", len(result.Problems))
			}
			fmt.Fprintln(out, "ok")
			return nil
		},
	}
	cmd.Flags().StringVar(&frontend, "frontend", "http://127.0.0.1:8080", "front end base URL")
	cmd.Flags().IntVar(&users, "users", dataset.Reed98Users, "user count the dataset was loaded with")
	cmd.Flags().IntVar(&samples, "samples", 20, "users whose two timelines are read")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the user sample")
	cmd.Flags().Uint64Var(&datasetSeed, "dataset-seed", dataset.DefaultSeed, "seed the dataset was loaded with (load --seed): its graph sets each home timeline's minimum")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a front end that is not on loopback")
	return cmd
}
