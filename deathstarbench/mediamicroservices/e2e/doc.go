// Package e2e holds the end-to-end test of the media microservices, built
// only with the e2e tag. It needs Go (it builds deathstarbench/cmd/mediamicro
// and our FerretDB, deathstarbench/cmd/ferretdb, into a temporary
// directory) and Debian's memcached and redis-server (`apt-get install -y
// memcached redis-server`, or `just tools`); without them it skips, or fails
// under ORCHBENCH_TEST_STRICT=1 as `just test-integration` sets it.
//
// It runs one FerretDB on a temporary data directory, one memcached and one
// redis-server shared by the fourteen services (each service prefixes its
// keys and names its MongoDB database after itself, so they cannot collide),
// every service a mediamicro process of its own on a loopback port. In order,
// as one test's subtests, since each needs what the one before wrote: the
// full dataset loaded through the front end, twice, and verified; reviews
// composed concurrently through the front end and read back from every
// user's and movie's list, with the rating tallies and the original's 400
// and 500 answers; Redis restarted empty and memcached flushed, and the
// user-review service killed and started again, without losing a review;
// and DeathStarBench's load shape, a compose-review.lua-like script run by
// harness/loadgen at the README's target URL, every review it composed
// stored. About a minute and a half on two cores.
//
//	go test -tags e2e -count=1 -v ./deathstarbench/mediamicroservices/e2e/
package e2e
