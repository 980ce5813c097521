#!/usr/bin/env bash
# Generates the Go code of Hubble's API (packages flow, observer, peer and
# relay) from the .proto files Cilium publishes, in the version hack/interop
# pins (github.com/cilium/cilium), with apiary's Go import paths. Run by
# `go generate` (make generate); needs protoc (Debian: protobuf-compiler,
# libprotobuf-dev) and the Go module proxy. The output is committed: go
# build never needs protoc.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd ../../.. && pwd)
mod=github.com/apiary-net/apiary/datapath/hubble/api

# Plugin versions follow the main go.mod's google.golang.org/protobuf; the
# gRPC plugin is the release Cilium generated its code with.
pbver=$(go -C "$root" list -m -f '{{.Version}}' google.golang.org/protobuf)
grpcver=v1.6.2
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin GOFLAGS= go install "google.golang.org/protobuf/cmd/protoc-gen-go@$pbver"
GOBIN=$bin GOFLAGS= go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$grpcver"

cilium=$(cd "$root/hack/interop" && GOFLAGS= go mod download -json github.com/cilium/cilium | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
src=$cilium/api/v1
inc=/usr/include
[[ -f $inc/google/protobuf/timestamp.proto ]] || { echo "gen.sh: $inc/google/protobuf/*.proto missing (apt-get install libprotobuf-dev)" >&2; exit 1; }

files=(flow/flow.proto relay/relay.proto observer/observer.proto peer/peer.proto)
m=()
for f in "${files[@]}"; do
	m+=("M$f=$mod/$(dirname "$f")")
done
gomap=$(IFS=,; echo "${m[*]}")
rm -f ./*/*.pb.go
PATH=$bin:$PATH protoc -I "$src" -I "$inc" \
	--go_out="$here" --go_opt=paths=source_relative --go_opt="$gomap" \
	--go-grpc_out="$here" --go-grpc_opt=paths=source_relative --go-grpc_opt="$gomap" \
	"${files[@]}"
