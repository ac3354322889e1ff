// Package e2e holds the end-to-end test of the hotel reservation, built
// only with the e2e tag. It needs Go (it builds deathstarbench/cmd/hotelres
// and our FerretDB, deathstarbench/cmd/ferretdb, into a temporary
// directory) and Debian's memcached (`apt-get install -y memcached`, or
// `just tools`); without memcached it skips, or fails under
// ORCHBENCH_TEST_STRICT=1 as `just test-integration` sets it. It runs one
// FerretDB on a temporary data directory, one memcached and the eight
// services as separate processes on loopback ports, checks the answers
// against the original's logic, kills and restarts services to show the
// bookings are in FerretDB and re-seeding adds nothing, and drives the
// hotel-reservation:mixed workload briefly. About a minute.
//
//	go test -tags e2e -count=1 -v ./deathstarbench/hotelreservation/e2e/
package e2e
