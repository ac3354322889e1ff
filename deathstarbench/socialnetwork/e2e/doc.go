// Package e2e holds the end-to-end tests of the social network, built only
// with the e2e tag: they start redis-server, memcached (Debian's binaries),
// our FerretDB and the twelve services as separate processes on loopback.
// The durability tests SIGKILL Redis and FerretDB, run as the pack runs
// them, under a stream of writes, and count the acknowledged writes missing
// after a restart on the same files.
//
//	go test -tags e2e -v ./deathstarbench/socialnetwork/e2e/
package e2e
