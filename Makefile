# Every target installs what it needs first; tools land in .tools/ (git-ignored).
GO ?= go
BIN := bin/pi-lsp

.PHONY: build test test-go fuzz vsix bench demo tools clean

build:
	$(GO) build -o $(BIN) ./cmd/pi-lsp

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

vsix:
	bash scripts/build-vsix.sh

bench: build
	bash scripts/bench.sh --write-docs

clean:
	rm -rf bin
