# Every target installs what it needs first; tools land in .tools/ (git-ignored).
GO ?= go
BIN := bin/pi-lsp
# One version for the binary, the editors' packages and the Pi package (scripts/set-version.sh).
VERSION := $(shell cat VERSION)
LDFLAGS := -X main.Version=$(VERSION)

.PHONY: build test test-go test-dist fuzz vsix dist bench bench-budget bench-compare demo quality tools clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/pi-lsp

# The main job on the embedded default: compact a shipped example session offline.
demo: build
	$(BIN) demo

# Every test layer: unit, differential against real Pi, LSP harness, process level,
# real editors. Installs real Pi, Neovim, code-server and chromium first.
test: build
	bash scripts/test.sh

# Go layers only (no Node, no editors): what `go test ./...` covers.
test-go:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# Random exploration of every fuzz target (not part of `make test`): FUZZTIME each, default
# 30s. A failing input lands in the package's testdata/fuzz/; commit it with the fix.
fuzz:
	bash scripts/fuzz.sh $(or $(FUZZTIME),30s)

# The VS Code package of this machine's platform: editors/vscode/pi-lsp.vsix.
vsix:
	bash scripts/build-vsix.sh

# Release artifacts in dist/: pi-lsp_<version>_<os>_<arch>.tar.gz (.zip for windows) for
# linux, darwin, windows x amd64, arm64 (static, stripped, reproducible), one VS Code
# package per platform, the Pi package (npm pack of editors/pi), SHA256SUMS.
dist:
	bash scripts/dist.sh

# make dist, then every artifact checked and installed: the archive's binary, the
# linux-x64 VS Code package in code-server, the Pi package in real Pi 1.6.0, the Neovim
# recipes, the version handshake (the "dist" layer of scripts/test.sh).
test-dist:
	PI_LSP_LAYERS=dist bash scripts/test.sh

bench: build
	bash scripts/bench.sh --write-docs

# The latency budget of an editor user (spawn to first tree, live follow, tree pages under
# load, memory of a long follow, the parser on one core beside Pi), quiet and under a CPU
# hog; rewrites the budget table of docs/BENCHMARKS.md.
bench-budget: build
	bash scripts/bench-budget.sh --write-docs

# Two commits compared on this machine in one run, measured in turns:
#   make bench-compare A=main~1 B=main
bench-compare:
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make bench-compare A=COMMIT B=COMMIT" >&2; exit 2; }
	bash scripts/bench-compare.sh $(A) $(B)

# The checkpoint quality benchmark (internal/quality): every session summarized by the
# extractive summarizer, a heading-only template and, when PI_LSP_SUMMARIZER=openai (with
# PI_LSP_BASE_URL and PI_LSP_MODEL) is set, a model; prints the table and rewrites
# docs/QUALITY.md. A benchmark, not a gate. The real-session corpus is scored too when
# testdata/real holds it (go run ./tools/quality -import-real DIR); it says so when not.
quality:
	$(GO) run ./tools/quality -write docs/QUALITY.md

clean:
	rm -rf bin dist
