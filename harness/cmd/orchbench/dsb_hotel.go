package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	hoteldataset "github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
)

// newDSBHotelCmd is `orchbench dsb hotel-reservation`: the hotel
// reservation seeds its own data, so there is nothing to load, only to
// verify.
func newDSBHotelCmd() *cobra.Command {
	hotel := &cobra.Command{Use: "hotel-reservation", Short: "The hotel reservation: verify that a deployment serves its seeded data"}
	hotel.AddCommand(newDSBHotelVerifyCmd())
	return hotel
}

func newDSBHotelVerifyCmd() *cobra.Command {
	var (
		frontend       string
		allowRemote    bool
		timeout        time.Duration
		requestTimeout time.Duration
		users          int
		seed           uint64
	)
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Read the seeded hotels, recommendations and users through the HTTP API; fail unless each is as seeded",
		Long: `Checks through the front end's HTTP API, reading only (it books nothing), that
the deployment serves the data every service seeds at start: /hotels near hotel
1 for the night of 2015-04-09 answers hotels 2, 1 and 3 with their seeded names,
phone numbers and positions; /recommendations by rate answers the hotels of the
highest seeded rate (9, 24, 39, 54, 69) and by price the cheapest (2); by
distance at a hotel's own position, that hotel (1, 3, 6, 7 and 80); /hotels
without dates answers the original's 400; Cornell_0, Cornell_500 and users drawn
with --seed log in, and a wrong password does not.

Prints one line per check ("ok" or "FAIL" and what was answered: status and the
body's first 200 bytes) and exits non-zero naming the first failure. Each
request may take --request-timeout, the whole run --timeout; the sweep runs this
(orchbench_verify_args) before measuring a reused deployment.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFrontend(frontend, allowRemote); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			out := cmd.OutOrStdout()
			started := time.Now()
			result, err := hoteldataset.Verify(ctx, hoteldataset.VerifyOptions{
				Frontend:       frontend,
				RequestTimeout: requestTimeout,
				SampledUsers:   users,
				Seed:           seed,
				Progress:       func(line string) { fmt.Fprintln(out, line) },
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "ok: %d checks passed in %s\n", len(result.Checks), time.Since(started).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVar(&frontend, "frontend", "http://127.0.0.1:5000", "front end base URL")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a front end that is not on loopback")
	cmd.Flags().DurationVar(&timeout, "timeout", 90*time.Second, "give up on the whole verification after this long")
	cmd.Flags().DurationVar(&requestTimeout, "request-timeout", hoteldataset.DefaultRequestTimeout, "give up on one request after this long")
	cmd.Flags().IntVar(&users, "users", hoteldataset.DefaultSampledUsers, "users drawn to log in, besides the first and the last")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the drawn users")
	return cmd
}
