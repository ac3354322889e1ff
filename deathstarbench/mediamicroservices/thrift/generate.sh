#!/bin/sh
# Regenerates the Go bindings of media_microservices.thrift into gen-go/mediamicro.
# Needs Debian's thrift compiler 0.17 (apt-get install thrift-compiler), whose
# output matches github.com/apache/thrift v0.17.0 pinned in go.mod.
set -eu
cd "$(dirname "$0")"
version=$(thrift --version)
case "$version" in
  *0.17.*) ;;
  *) echo "generate.sh: want thrift 0.17.x, found: $version" >&2; exit 1 ;;
esac
rm -rf gen-go
thrift -r --gen go:package_prefix=github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/,skip_remote media_microservices.thrift
gofmt -w gen-go
