// Command image builds apiary's container image without a container
// daemon (`make image`), as ko does, with go-containerregistry: the
// static (CGO_ENABLED=0) apiary-agent, apiary and apiary-cni in
// /usr/local/bin and the host's CA bundle in
// /etc/ssl/certs/ca-certificates.crt, on an empty base, written as a
// docker archive (`docker load`, `ctr images import`) tagged with the
// reference of install/kubernetes/daemonset.yaml. The Dockerfile at the
// repository's root builds the same file set with a container daemon.
//
// It is a module of its own so that the main module's go.mod does not
// name go-containerregistry (docs/design.md, Layers).
package main
