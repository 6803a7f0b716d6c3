# regionctl: entry points. `make help` lists them.
GO      ?= go
BIN     := bin/regionctl
PKGS    := ./...

.PHONY: help build test validate render check fuzz bench demo clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/regionctl
	$(GO) build -o $(BIN) ./cmd/regionctl

validate: build ## validate the example fleet in config/
	./$(BIN) validate

render: build ## render the example fleet into deploy/
	./$(BIN) render

check: build ## fail when deploy/ is stale
	./$(BIN) render --check --no-cache

test: build ## run every test, then check the repository's own deploy/
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 40m $(PKGS)
	cd conformance/tekton && $(GO) vet ./... && $(GO) test -count=1 ./...
	./$(BIN) render --check --no-cache

fuzz: ## fuzz the loader and the merge (FUZZTIME=10m for a long run)
	$(GO) test ./internal/fleet -run '^$$' -fuzz FuzzLoadMerge -fuzztime $(or $(FUZZTIME),60s)

# Generated fleets and rendered trees go here (BENCH_TMPDIR=... to move them):
# file creation speed differs widely between directories on some machines.
BENCH_TMPDIR ?= /tmp/regionctl-bench

bench: build ## measure validate, render, diff and affected on 100 to 5,000 clusters; print one table
	mkdir -p $(BENCH_TMPDIR)
	REGIONCTL_BIN=$(CURDIR)/$(BIN) TMPDIR=$(BENCH_TMPDIR) $(GO) test -run '^$$' -bench Scale -benchtime 5x -timeout 60m ./internal/benchmarks

# Terraform installs providers only from a local mirror (scripts/terraformrc
# finds it, or says how to provide one); never from the network.
TF_RC := $(CURDIR)/.regionctl/terraformrc

$(TF_RC): scripts/terraformrc
	mkdir -p $(CURDIR)/.regionctl/plugin-cache
	scripts/terraformrc $(CURDIR)/.regionctl/plugin-cache > $@.tmp && mv $@.tmp $@

demo: build $(TF_RC) ## provision one region end to end against moto and a local platform API, then clean up (REGION=eu-west-1)
	TF_CLI_CONFIG_FILE=$(TF_RC) CHECKPOINT_DISABLE=1 ./$(BIN) dev demo --region $(or $(REGION),eu-west-1)

clean: ## remove build output
	rm -rf bin
