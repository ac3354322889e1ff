// Package e2e holds the end-to-end test of the social network, built only
// with the e2e tag: it starts redis-server, memcached (Debian's binaries),
// our FerretDB and the twelve services as separate processes on loopback.
//
//	go test -tags e2e -v ./deathstarbench/socialnetwork/e2e/
package e2e
