# brig — see README.md. Every target builds what it needs.
GO      ?= go
BIN     := bin/brig
PKGS    := ./...
export CGO_ENABLED := 1

.PHONY: all build run test test-deps bench vet fmt clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/brig

run: build
	./$(BIN)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet $(PKGS)

# Every test: unit, kernel (the real jail on this kernel), escape suite (as
# root and as an unprivileged user), end-to-end.
test: build vet test-deps
	$(GO) test -count=1 -timeout 20m $(PKGS)

# A real third-party MCP server for internal/mcp's tests (skipped without
# it): the official filesystem server from npm, outside the repository.
NPM_TEST_PREFIX ?= /var/tmp/brig-test-npm
test-deps:
	@command -v npm >/dev/null 2>&1 && test -x $(NPM_TEST_PREFIX)/node_modules/.bin/mcp-server-filesystem || \
	  { command -v npm >/dev/null 2>&1 && npm install --silent --no-audit --no-fund --prefix $(NPM_TEST_PREFIX) @modelcontextprotocol/server-filesystem@2026.8.31; } || \
	  echo "test-deps: npm unavailable; the third-party MCP server test will be skipped"

# Jail spawn overhead against a plain exec (and bubblewrap when installed),
# then the Go benchmarks.
bench: build
	$(GO) run ./test/bench/spawn -runs 400
	$(GO) run ./test/bench/agent -calls 50 -runs 5
	$(GO) test -run '^$$' -bench . -benchtime 200x ./supervisor/
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/session/
	$(GO) test -run '^$$' -bench . -benchtime 5x ./internal/checkpoint/
	$(GO) test -run '^$$' -bench . -benchtime 200x ./internal/auditlog/
	$(GO) test -run '^$$' -bench Search -benchtime 3x ./tools/
	$(GO) run ./test/bench/tui -runs 20 -turns 100
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/tui/

clean:
	rm -rf bin
