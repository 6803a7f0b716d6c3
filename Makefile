# regionctl: entry points. `make help` lists them.
GO      ?= go
# The toolchain everything is built and tested with (go.mod names it too):
# go1.26.8 links twelve reachable standard-library vulnerabilities that
# go1.27.3 fixes (make vulncheck). The go command fetches it from the
# module proxy once per machine (about 76 MB); a machine's own Go ignores
# go.mod's toolchain line, so it is exported here for every go command.
export GOTOOLCHAIN := go1.27.3
BIN     := bin/regionctl
PKGS    := ./...
# Binaries say which commit they were built from when built in a checkout.
BUILDVCS := $(shell git rev-parse --git-dir >/dev/null 2>&1 && echo -buildvcs=true)

.PHONY: help build static dist dist-host cross image test conformance-argocd argocd-warm validate render check fuzz bench demo clean iamsim markdown kube-apiserver vulncheck

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/regionctl
	$(GO) build $(BUILDVCS) -o $(BIN) ./cmd/regionctl

# The runner image's regionctl: static (the image has no libc), stamped with
# the commit when built from a git checkout.
STATIC_BIN := bin/regionctl-linux-amd64

static: ## build the static linux/amd64 regionctl the runner image holds
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath $(BUILDVCS) -o $(STATIC_BIN) ./cmd/regionctl

# The runner image: regionctl, the pinned terraform and the provider mirror,
# and Argo CD's install manifests at conformance/argocd's pin.
TERRAFORM_VERSION  := $(shell cat image/TERRAFORM_VERSION)
TF_PROVIDER_MIRROR ?= /opt/tf-plugins
IMAGE_REPOSITORY   ?= registry.platform.example.com/platform/regionctl
IMAGE_LAYOUT       := bin/regionctl-image

image: build static ## build the runner image into bin/regionctl-image (an OCI layout) and print its digest
	./$(BIN) dev argocd-manifests --go-mod conformance/argocd/go.mod -o bin/argocd-install.yaml
	cd image && $(GO) run . -out $(CURDIR)/$(IMAGE_LAYOUT) -regionctl $(CURDIR)/$(STATIC_BIN) \
		-terraform "$$(command -v terraform)" -terraform-version $(TERRAFORM_VERSION) \
		-mirror $(TF_PROVIDER_MIRROR) -argocd-manifests $(CURDIR)/bin/argocd-install.yaml -repository $(IMAGE_REPOSITORY) \
		-epoch "$$(git log -1 --format=%ct 2>/dev/null || echo 0)"

validate: build ## validate the example fleet in config/
	./$(BIN) validate

render: build ## render the example fleet into deploy/
	./$(BIN) render

check: build ## fail when deploy/ is stale
	./$(BIN) render --check --no-cache

# regionctl builds for macOS and Windows too (the atomic swap and the render
# lock have a path for each); CI checks that it still does.
# A release: one archive per platform (linux, darwin, windows; amd64 and
# arm64) with version and commit stamped, a CycloneDX SBOM each, SHA256SUMS;
# checked after building (tools/dist). A clean checkout of a v* tag is that
# release; anything else is a snapshot. VERSION=1.2.3 names it.
dist: ## build the release archives, SBOMs and checksums into dist/ and check them (SIGN_KEY=<ed25519 key> signs SHA256SUMS)
	$(GO) run ./tools/dist -out dist $(if $(VERSION),-version $(VERSION)) $(if $(SIGN_KEY),-sign-key $(SIGN_KEY))

# make test checks the release build of this machine's platform only (the
# same build and checks, one archive): all six take most of a test run's
# build time, and `make cross` plus the cross-compiled test binaries below
# keep the other platforms building.
HOST_PLATFORM := $(shell $(GO) env GOOS)/$(shell $(GO) env GOARCH)

dist-host: ## build and check the release archive of this machine's platform only, into bin/dist-host
	$(GO) run ./tools/dist -out bin/dist-host -targets $(HOST_PLATFORM)

cross: ## build regionctl for darwin/arm64 and windows/amd64 (to nothing)
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/regionctl
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/regionctl

# The second IAM judge (tools/iamsim): @cloud-copilot/iam-simulate at the
# versions package-lock.json pins, installed from the npm registry. It is
# AGPL-3.0 and test-only: nothing of it is shipped.
IAMSIM := tools/iamsim/node_modules/.package-lock.json

$(IAMSIM): tools/iamsim/package.json tools/iamsim/package-lock.json
	cd tools/iamsim && npm ci --no-audit --no-fund --loglevel=error

iamsim: $(IAMSIM) ## install the second IAM judge the tests compare with (npm ci in tools/iamsim)

# The CommonMark renderer the tutorial's test reads it through
# (tools/markdown): markdown-it at the version package-lock.json pins.
MARKDOWN := tools/markdown/node_modules/.package-lock.json

$(MARKDOWN): tools/markdown/package.json tools/markdown/package-lock.json
	cd tools/markdown && npm ci --no-audit --no-fund --loglevel=error

markdown: $(MARKDOWN) ## install the CommonMark renderer the documentation tests read through (npm ci in tools/markdown)

# The Kubernetes API server the tests judge rendered objects by
# (internal/kube/apiserver): kube-apiserver built from the k8s.io/kubernetes
# module tools/kube-apiserver/go.mod pins, kept in the user cache by version
# so that every clone shares one build (about 6 minutes of CPU, once); etcd
# is Debian's etcd-server.
KUBE_VERSION := v1.37.2
KUBE_APISERVER := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/regionctl/envtest/$(KUBE_VERSION)/kube-apiserver

$(KUBE_APISERVER):
	mkdir -p $(dir $@)
	cd tools/kube-apiserver && $(GO) build -trimpath -o $@.tmp . && mv $@.tmp $@

kube-apiserver: $(KUBE_APISERVER) ## build the Kubernetes API server the tests judge rendered objects by (tools/kube-apiserver)
	@command -v etcd >/dev/null || { echo "no etcd: apt-get install etcd-server" >&2; exit 1; }

test: build static dist-host iamsim markdown kube-apiserver ## run every test (this platform's release build in snapshot mode included), then check the repository's own deploy/
	$(GO) vet $(PKGS)
	GOOS=darwin GOARCH=arm64 $(GO) test -c -o /dev/null ./internal/deploytree
	GOOS=windows GOARCH=amd64 $(GO) test -c -o /dev/null ./internal/deploytree
	$(GO) test -count=1 -timeout 40m $(PKGS)
	cd conformance/tekton && $(GO) vet ./... && REGIONCTL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 ./...
	cd conformance/secrets && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd conformance/charts && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd image && $(GO) vet ./... && REGIONCTL_STATIC_BIN=$(CURDIR)/$(STATIC_BIN) TF_PROVIDER_MIRROR=$(TF_PROVIDER_MIRROR) $(GO) test -count=1 ./...
	./$(BIN) render --check --no-cache

# The Go vulnerability database at a pinned commit of golang.org/x/vulndb
# (a module the proxy serves; no other network), indexed into govulncheck's
# database layout once per machine by the module's own indexdb.
VULNDB_VERSION      := v0.0.0-20261105234957-e22db6528018
GOVULNCHECK_VERSION := v1.9.0
VULNDB              := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/regionctl/vulndb/$(VULNDB_VERSION)

$(VULNDB)/index/db.json:
	rm -rf $(VULNDB).tmp
	src=$$($(GO) mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p') && \
		$(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) -vulns "$$src/data/osv" -out $(VULNDB).tmp
	rm -rf $(VULNDB) && mv $(VULNDB).tmp $(VULNDB)

vulncheck: $(VULNDB)/index/db.json ## fail on a known vulnerability reachable from regionctl's code (govulncheck, pinned database)
	$(GO) run golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION) -db file://$(VULNDB) ./...

# Argo CD's conformance tests import Argo CD v3.6 (about 1,100 packages),
# which needs Go 1.27 (the exported toolchain is): a cold build takes long
# (see README), so `make test` leaves it out and .ci/run runs it only when
# argocd-warm says its build cache is warm.
ARGOCD_GO := $(GO)

conformance-argocd: build ## expand the rendered ApplicationSets with Argo CD's own code (slow when cold)
	cd conformance/argocd && $(ARGOCD_GO) vet ./... && REGIONCTL_BIN=$(CURDIR)/$(BIN) $(ARGOCD_GO) test -count=1 ./...

argocd-warm: ## exit 0 when conformance-argocd would build nothing (its build cache is warm)
	@GO=$(GO) scripts/argocd-warm

fuzz: ## fuzz the loader and merge, and the round trips through render to Helm values, tfvars and PipelineRuns (FUZZTIME=10m for a long run)
	$(GO) test ./internal/fleet -run '^$$' -fuzz FuzzLoadMerge -fuzztime $(or $(FUZZTIME),60s)
	$(GO) test ./internal/render -run '^$$' -fuzz FuzzValuesRoundTrip -fuzztime $(or $(FUZZTIME),60s)
	$(GO) test ./internal/render -run '^$$' -fuzz FuzzTFVarsAndRunsRoundTrip -fuzztime $(or $(FUZZTIME),60s)

# Generated fleets and rendered trees go here (BENCH_TMPDIR=... to move them):
# file creation speed differs widely between directories on some machines.
BENCH_TMPDIR ?= /tmp/regionctl-bench

bench: ## measure whole processes on 2,200 clusters into BENCHMARKS.md, then the in-process table of 100 to 5,000 clusters
	mkdir -p $(BENCH_TMPDIR)
	@# A stamped build, as releases are (the benchmarks' own version): only
	@# such a build leaves unchanged clusters out of a review.
	$(GO) build -ldflags "-X github.com/regionctl/regionctl/internal/cli.Version=0.1.0-bench" -o bin/regionctl-bench ./cmd/regionctl
	TMPDIR=$(BENCH_TMPDIR) $(GO) run ./tools/procbench -bin bin/regionctl-bench -rounds $(or $(ROUNDS),5) -write BENCHMARKS.md
	REGIONCTL_BIN=$(CURDIR)/bin/regionctl-bench TMPDIR=$(BENCH_TMPDIR) $(GO) test -run '^$$' -bench Scale -benchtime 5x -timeout 60m ./internal/benchmarks

# Terraform installs providers only from a local mirror (scripts/terraformrc
# finds it, or says how to provide one); never from the network.
TF_RC := $(CURDIR)/.regionctl/terraformrc

$(TF_RC): scripts/terraformrc
	mkdir -p $(CURDIR)/.regionctl/plugin-cache
	scripts/terraformrc $(CURDIR)/.regionctl/plugin-cache > $@.tmp && mv $@.tmp $@

# The demo is a program of its own (cmd/regionctl-demo): the emulator and
# the IAM gate are never linked into the shipped regionctl.
demo: iamsim $(TF_RC) ## provision one region end to end against moto and a local platform API, then clean up (REGION=eu-west-1)
	$(GO) build -o bin/regionctl-demo ./cmd/regionctl-demo
	TF_CLI_CONFIG_FILE=$(TF_RC) CHECKPOINT_DISABLE=1 ./bin/regionctl-demo --root . --region $(or $(REGION),eu-west-1)

clean: ## remove build output
	rm -rf bin
