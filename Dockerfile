# apiary's image: the static (CGO_ENABLED=0) apiary-agent, apiary and
# apiary-cni in /usr/local/bin and the CA bundle, on an empty base.
# `make image` builds the same files and config without a container
# daemon (hack/image, whose TestDockerfile keeps the two in step):
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t ghcr.io/apiary-net/apiary:latest .
#
# The default user is nonroot (65532, distroless' convention), enough for
# the CLI run by hand. The DaemonSet runs every container as root
# (runAsUser: 0): the agent loads BPF programs, changes links, routes and
# network namespaces, and mounts bpffs; its init containers mount bpffs
# and write into the host's /opt/cni/bin.
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/apiary-net/apiary/cells/version.Version=${VERSION}" \
      -o /out/ ./cmd/apiary-agent ./cmd/apiary ./cmd/apiary-cni

FROM scratch
ARG VERSION=dev
ARG REVISION=
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/apiary-agent /out/apiary /out/apiary-cni /usr/local/bin/
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
LABEL org.opencontainers.image.title="apiary" \
      org.opencontainers.image.description="apiary-agent (node networking: identities, eBPF policy, ClusterMesh), the apiary CLI and the apiary-cni plugin" \
      org.opencontainers.image.source="https://github.com/apiary-net/apiary" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
USER 65532:65532
WORKDIR /
ENTRYPOINT ["/usr/local/bin/apiary-agent"]
