# regionctl: entry points. `make help` lists them.
GO      ?= go
BIN     := bin/regionctl
PKGS    := ./...

.PHONY: help build test validate render check fuzz bench clean

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

clean: ## remove build output
	rm -rf bin
