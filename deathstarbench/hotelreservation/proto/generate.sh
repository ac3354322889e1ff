#!/bin/sh
# Regenerates the Go bindings of hotel_reservation.proto. Needs Debian's
# protobuf-compiler (apt-get install protobuf-compiler); the two Go plugins
# are built at the versions pinned here, which match google.golang.org/protobuf
# and google.golang.org/grpc in go.mod (GOPROXY and GOFLAGS as for any build).
set -eu
cd "$(dirname "$0")"
PROTOC_GEN_GO_VERSION=v1.36.6
PROTOC_GEN_GO_GRPC_VERSION=v1.5.1
command -v protoc >/dev/null || { echo "generate.sh: protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
GOBIN=$bin go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
rm -f ./*.pb.go
PATH=$bin:$PATH protoc --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative hotel_reservation.proto
