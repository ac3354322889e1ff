package main

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	mediadataset "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
)

// newDSBMediaCmd is `orchbench dsb media-microservices`: its dataset is
// written through the front end (the pack's setup hook runs load) and read
// back before a reused deployment is measured (the verify hook).
func newDSBMediaCmd() *cobra.Command {
	media := &cobra.Command{Use: "media-microservices", Short: "The media microservices: load its users and movies, verify a deployment serves them"}
	media.AddCommand(newDSBMediaLoadCmd(), newDSBMediaVerifyCmd())
	return media
}

func newDSBMediaLoadCmd() *cobra.Command {
	var (
		frontend       string
		allowRemote    bool
		timeout        time.Duration
		requestTimeout time.Duration
		users          int
		concurrency    int
	)
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Register the users and movies, write every movie's cast, plot and information through the HTTP API",
		Long: `Writes the media microservices' dataset through the front end's HTTP API, as
DeathStarBench's register_users.sh and write_movie_info.py do: registers users
username_1..N, then one movie per distinct title of compose-review.lua (995),
then writes each movie's cast members, plot and movie information. The cast and
plots are synthetic (the original's TMDB files cannot be had here) and the same
on every run.

Each phase prints its count, rate and ETA every 10 s while it runs and a
closing line. A registration answered "already existed" counts as present and
the writes are upserts, so a re-run completes a partial load and changes
nothing after a full one. A phase with failures stops the load, naming the
first failed request and its answer (status and the body's first 200 bytes).
Each request may take --request-timeout, the whole load --timeout; the pack's
setup hook runs this.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFrontend(frontend, allowRemote); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "dataset: %d users, %d movies, %d requests\n", users, len(mediadataset.Movies()), mediadataset.Requests(users))
			started := time.Now()
			result, err := mediadataset.Load(ctx, mediadataset.LoadOptions{
				Frontend:       frontend,
				Users:          users,
				Concurrency:    concurrency,
				RequestTimeout: requestTimeout,
				Progress:       func(line string) { fmt.Fprintln(out, line) },
			})
			for _, phase := range result.Phases {
				for _, message := range phase.FirstErrors {
					fmt.Fprintf(out, "  %s error: %s\n", phase.Name, message)
				}
			}
			fmt.Fprintf(out, "loaded in %s: %d requests, %d failed\n", time.Since(started).Round(time.Millisecond), result.Requests(), result.Failed())
			return err
		},
	}
	cmd.Flags().StringVar(&frontend, "frontend", "http://127.0.0.1:8080", "front end base URL")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a front end that is not on loopback")
	// Under the pack's 15-minute setup hook, so the load ends with its own
	// account of how far it came rather than being killed.
	cmd.Flags().DurationVar(&timeout, "timeout", 14*time.Minute, "give up on the whole load after this long")
	cmd.Flags().DurationVar(&requestTimeout, "request-timeout", mediadataset.DefaultLoadRequestTimeout, "give up on one request after this long")
	cmd.Flags().IntVar(&users, "users", mediadataset.DefaultUsers, "users to register (username_1..N)")
	cmd.Flags().IntVar(&concurrency, "concurrency", mediadataset.DefaultConcurrency, "requests in flight")
	return cmd
}

func newDSBMediaVerifyCmd() *cobra.Command {
	var (
		frontend       string
		allowRemote    bool
		timeout        time.Duration
		requestTimeout time.Duration
		users          int
		sampledUsers   int
		sampledMovies  int
		seed           uint64
		concurrency    int
	)
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Read the users and movies back through the HTTP API; fail unless each is as loaded",
		Long: `Checks through the front end's read routes that the deployment serves the
dataset load writes: /orchbench/user gives each user username_1..N with its
names, /orchbench/movie-id gives each title its movie id, and /orchbench/page
gives each movie's information, cast (in order) and plot exactly as loaded;
an unknown title answers 404, and a compose without a title answers 400
"Incomplete arguments" (the one POST, which writes nothing). By default every
user and movie is read; --sampled-users and --sampled-movies read the first,
the last and that many drawn with --seed instead.

Prints one line per check ("ok" or "FAIL" and what was answered: status and
the body's first 200 bytes) and exits non-zero naming the first failure. Each
request may take --request-timeout, the whole run --timeout; the sweep runs
this (orchbench_verify_args) before measuring a reused deployment.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFrontend(frontend, allowRemote); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			out := cmd.OutOrStdout()
			started := time.Now()
			result, err := mediadataset.Verify(ctx, mediadataset.VerifyOptions{
				Frontend:       frontend,
				RequestTimeout: requestTimeout,
				Users:          users,
				SampledUsers:   sampledUsers,
				SampledMovies:  sampledMovies,
				Seed:           seed,
				Concurrency:    concurrency,
				Progress:       func(line string) { fmt.Fprintln(out, line) },
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "ok: %d checks passed in %s\n", len(result.Checks), time.Since(started).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVar(&frontend, "frontend", "http://127.0.0.1:8080", "front end base URL")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a front end that is not on loopback")
	// Under the pack's 5-minute verify hook, as load's is under setup's.
	cmd.Flags().DurationVar(&timeout, "timeout", 4*time.Minute, "give up on the whole verification after this long")
	cmd.Flags().DurationVar(&requestTimeout, "request-timeout", mediadataset.DefaultRequestTimeout, "give up on one request after this long")
	cmd.Flags().IntVar(&users, "users", mediadataset.DefaultUsers, "users the dataset was loaded with (load --users)")
	cmd.Flags().IntVar(&sampledUsers, "sampled-users", 0, "users drawn to read besides the first and the last; 0 reads every one")
	cmd.Flags().IntVar(&sampledMovies, "sampled-movies", 0, "movies drawn to read besides the first and the last; 0 reads every one")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the drawn users and movies")
	cmd.Flags().IntVar(&concurrency, "concurrency", mediadataset.DefaultVerifyConcurrency, "reads in flight")
	return cmd
}
