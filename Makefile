# apiary — developer entry points. `make` lists them.

GO        ?= go
BIN       := _output/bin
RUN_DIR   := _run
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/apiary-net/apiary/cells/version.Version=$(VERSION)
TEST_ARGS ?=
FUZZ_EXECS ?= 20000
# Compiler for the eBPF programs (bpf/); `make bpf` installs it if missing.
export BPF_CLANG ?= clang-19
export BPF_STRIP ?= llvm-strip-19

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

.PHONY: build
build: ## Build apiary-agent, apiary and apiary-cni into _output/bin
	@mkdir -p $(BIN)
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/apiary-agent ./cmd/apiary ./cmd/apiary-cni

.PHONY: test
test: lint kube-apiserver kube-controller-manager bpf-toolchain container-tools ## Run every test (race detector on), the benchmark and interop modules' tests included, then make fuzz
	$(GO) test -race -count=1 $(TEST_ARGS) ./...
	cd hack/bench && $(GO) test -count=1 ./...
	# Cilium's generated Hubble protobuf packages and apiary's (datapath/hubble/api)
	# register the same names; tests that link both only warn (hack/interop/README.md).
	cd hack/interop && GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn $(GO) test -count=1 ./...
	cd hack/image && $(GO) test -count=1 ./...
	@$(MAKE) --no-print-directory manifests
	@$(MAKE) --no-print-directory fuzz

.PHONY: fuzz
fuzz: ## Run every fuzz target from its corpus for FUZZ_EXECS executions each (default 20000)
	hack/fuzz.sh $(GO) $(FUZZ_EXECS)

.PHONY: lint
lint: ## gofmt, go vet (and staticcheck when installed)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd hack/bench && $(GO) vet ./...
	cd hack/interop && $(GO) vet ./...
	cd hack/manifests && $(GO) vet ./...
	cd hack/image && $(GO) vet ./...
	hack/check-layers.sh
	@if command -v staticcheck >/dev/null; then staticcheck ./...; fi

.PHONY: manifests
manifests: ## Check install/kubernetes: strict decoding, CRD validation, policy test data against the CRDs
	cd hack/manifests && $(GO) test -count=1 ./...

.PHONY: manifests-gen
manifests-gen: ## Regenerate install/kubernetes/crds from hack/manifests/schema.go
	cd hack/manifests && $(GO) run ./gen-crds

# The image's labels: the commit and its time (a reproducible image).
REVISION      ?= $(shell git rev-parse HEAD 2>/dev/null)
IMAGE_CREATED ?= $(shell git log -1 --format=%cI 2>/dev/null)

.PHONY: image
image: ## Build the container image without a daemon into _output/image/apiary.tar (docker load, ctr images import)
	cd hack/image && $(GO) run . --root=$(CURDIR) --out=$(CURDIR)/_output/image/apiary.tar \
	  --version=$(VERSION) --revision=$(REVISION) --created=$(IMAGE_CREATED)

.PHONY: bench
bench: kube-apiserver ## Run the benchmarks and print side-by-side ratios
	cd hack/bench && $(GO) run ./cmd/hivebench
	cd hack/bench && $(GO) run ./cmd/kvbench
	cd hack/bench && $(GO) run ./cmd/ipcachebench
	cd hack/bench && $(GO) run ./cmd/identitybench
	cd hack/bench && $(GO) run ./cmd/policybench
	cd hack/bench && $(GO) run ./cmd/bpfbench
	cd hack/bench && $(GO) run ./cmd/bpfmapbench
	cd hack/bench && $(GO) run ./cmd/svcbench
	cd hack/bench && $(GO) run ./cmd/cmbench
	cd hack/bench && $(GO) run ./cmd/meshbench
	cd hack/bench && $(GO) run ./cmd/k8sbench
	cd hack/bench && $(GO) run ./cmd/hubblebench
	cd hack/bench && $(GO) run ./cmd/cepbench -runs 1

.PHONY: bpf
bpf: bpf-toolchain ## Regenerate the eBPF objects and bpf/sources.lock from bpf/*.c
	$(GO) generate ./bpf

.PHONY: bpf-toolchain
bpf-toolchain:
	@if ! command -v $(BPF_CLANG) >/dev/null || ! command -v $(BPF_STRIP) >/dev/null; then \
	  echo "installing clang-19 llvm-19 (Debian)"; \
	  apt-get update && apt-get install -y clang-19 llvm-19; \
	fi

.PHONY: container-tools
container-tools: # containerd, ctr and runc: hack/image's test imports and runs the image with them
	@if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null || ! command -v runc >/dev/null; then \
	  echo "installing containerd runc (Debian)"; \
	  apt-get update && apt-get install -y containerd runc; \
	fi

.PHONY: proto-toolchain
proto-toolchain: # protoc and the well-known .proto files, for datapath/hubble/api/gen.sh
	@if ! command -v protoc >/dev/null || [ ! -f /usr/include/google/protobuf/timestamp.proto ]; then \
	  echo "installing protobuf-compiler libprotobuf-dev (Debian)"; \
	  apt-get update && apt-get install -y protobuf-compiler libprotobuf-dev; \
	fi

.PHONY: generate
generate: bpf-toolchain proto-toolchain ## Regenerate generated code (committed; go build never needs it)
	$(GO) generate ./...
	cd hack/bench && $(GO) generate ./...

.PHONY: run
run: build ## Build and run the agent in the foreground with state and socket under ./_run
	@mkdir -p $(RUN_DIR)
	@echo "apiary-agent: API socket $(CURDIR)/$(RUN_DIR)/apiary.sock"
	@echo "  from another shell: $(BIN)/apiary --socket $(RUN_DIR)/apiary.sock status"
	exec $(BIN)/apiary-agent --socket-path=$(CURDIR)/$(RUN_DIR)/apiary.sock --state-dir=$(CURDIR)/$(RUN_DIR)/state $(ARGS)

SCENARIO ?= policy/testdata/scenarios/clustermesh-l4.yaml
KEEP      ?=
# More flags of the lab runner, e.g. DEMO_ARGS=--bench or --restart-round.
DEMO_ARGS ?=

.PHONY: demo
# One `go build` of the agent, the CLI and the runner, whose etcds are
# its own `demo etcd` (etcd's embed package): the etcd and gRPC packages
# compile once. Built for a short first build (docs/demo.md), into their
# own directory so that `make build`'s binaries stay the optimised ones:
# -gcflags=all=-l (no inlining) about a fifth less compile CPU; -s -w (no
# symbol table or DWARF) a third less link time; CGO_ENABLED=0 (none of
# them needs cgo) no C compiler runs for net, os/user and runtime/cgo.
DEMO_BIN   := _output/demo
DEMO_BUILD := CGO_ENABLED=0 $(GO) build -gcflags=all=-l -ldflags "$(LDFLAGS) -s -w"
demo: ## Two meshed clusters on this machine running SCENARIO with real packets (root; KEEP=1 leaves it up)
	@mkdir -p $(DEMO_BIN)
	$(DEMO_BUILD) -o $(DEMO_BIN)/ ./cmd/apiary-agent ./cmd/apiary ./hack/demo
	$(DEMO_BIN)/demo --keep=$(if $(filter 1 true yes,$(KEEP)),true,false) $(DEMO_ARGS) $(SCENARIO)

.PHONY: demo-down
demo-down: ## Remove a lab left up by make demo KEEP=1 (or by a killed run)
	@mkdir -p $(DEMO_BIN)
	$(DEMO_BUILD) -o $(DEMO_BIN)/ ./hack/demo
	$(DEMO_BIN)/demo down

.PHONY: etcd
etcd: hack/tools/bin/etcd ## Build an etcd server from the Go module proxy (for multi-process tests; make demo runs its own)

hack/tools/bin/etcd: hack/tools/go.mod
	cd hack/tools && $(GO) build -o bin/etcd go.etcd.io/etcd/server/v3

.PHONY: kube-apiserver
kube-apiserver: hack/tools/bin/kube-apiserver ## Build kube-apiserver v1.35 from the Go module proxy (the Kubernetes tests run it)

.PHONY: kube-controller-manager
kube-controller-manager: hack/tools/bin/kube-controller-manager ## Build kube-controller-manager v1.35 from the Go module proxy (the node IPAM tests run it)

# The first build takes minutes; the Go build cache keeps later ones short.
# The version goes in as Kubernetes' release builds set it (/version).
hack/tools/bin/kube-apiserver hack/tools/bin/kube-controller-manager: hack/tools/bin/%: hack/tools/kube/go.mod
	cd hack/tools/kube && v=$$($(GO) list -m -f '{{.Version}}' k8s.io/kubernetes) && \
	  minor=$$(echo $$v | cut -d. -f2) && pkg=k8s.io/component-base/version && \
	  $(GO) build -ldflags "-X $$pkg.gitVersion=$$v -X $$pkg.gitMajor=1 -X $$pkg.gitMinor=$$minor -X $$pkg.gitTreeState=clean" \
	    -o bin.tmp.$* k8s.io/kubernetes/cmd/$*
	@mkdir -p hack/tools/bin && mv hack/tools/kube/bin.tmp.$* $@

.PHONY: clean
clean: ## Remove build outputs and the run directory
	rm -rf _output $(RUN_DIR) hack/tools/bin
