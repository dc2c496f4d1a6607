# brig — see README.md. Every target builds what it needs, and first installs
# what this machine lacks for it (internal/build/deps.sh: one line for each
# install; where it cannot install, one line naming the command to run;
# BRIG_DEPS=check never installs).
GO      ?= go
BIN     := bin/brig
PKGS    := ./...
DEPS    := sh internal/build/deps.sh
export CGO_ENABLED := 1

# brig version: every build carries its version and commit; a release also
# its build date.
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)
STAMP    = -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: all deps build run test test-deps test-release bench vet fmt clean \
	release release-amd64 release-arm64 install uninstall

all: build

deps:
	@$(DEPS) build musl

# brig carries its jail child (cmd/brig-jail) inside it: internal/build/build.sh.
build: deps
	GO=$(GO) LDFLAGS='$(STAMP)' sh internal/build/build.sh $(BIN)

run: build
	./$(BIN)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet $(PKGS)
	$(GO) vet -tags brig_light_worker ./tools ./internal/jailtools ./cmd/brig-jail
	$(GO) vet -tags brig_carrier ./tools ./cmd/brig

# Every test: unit, kernel (the real jail on this kernel), escape suite (as
# root and as an unprivileged user), end-to-end, the build scripts, and the
# static release binary of this machine's architecture run in a minimal root.
# The suites that each load the whole machine (the escape suite, the
# scenarios, the TUI in tmux, the integration tests) run one at a time
# after the rest: run side by side on two slow cores they starved each
# other past their deadlines. The escape suite alone took 19–21 minutes on
# a slow VM, so their deadline (a guard against a hang, not a budget) is
# 35 minutes; the escape probe's victim outlives it (probe.c).
HEAVY_PKGS := ./test/escape ./test/e2e ./test/tui ./test/integration
test: build vet test-deps test-release
	BRIG_RELEASE_DIR=$(CURDIR)/$(CHECK_DIR) BRIG_RELEASE_COMMIT=$(COMMIT) $(GO) test -count=1 -timeout 20m \
	  $$($(GO) list $(PKGS) | grep -v -x -F $(foreach p,$(HEAVY_PKGS),-e brig/$(patsubst ./%,%,$(p))))
	$(GO) test -count=1 -tags brig_light_worker ./internal/jailtools # the light worker's list of tools
	$(GO) test -count=1 -tags brig_carrier -run TestWebFetchInBrigItself ./tools # brig's own build (build.sh)
	$(GO) test -count=1 -timeout 35m -p 1 $(HEAVY_PKGS)

# A real third-party MCP server for internal/mcp's tests (skipped without
# it): the official filesystem server from npm, outside the repository.
NPM_TEST_PREFIX ?= /var/tmp/brig-test-npm
test-deps:
	@$(DEPS) test
	@command -v npm >/dev/null 2>&1 && test -x $(NPM_TEST_PREFIX)/node_modules/.bin/mcp-server-filesystem || \
	  { command -v npm >/dev/null 2>&1 && npm install --silent --no-audit --no-fund --prefix $(NPM_TEST_PREFIX) @modelcontextprotocol/server-filesystem@2026.8.31; } || \
	  echo "test-deps: npm unavailable; the third-party MCP server test will be skipped"

# The release check in make test needs a static build for this machine (in
# its own directory, so make test never checks or replaces a release); where
# no static libseccomp can be had, the check is skipped and says why.
CHECK_DIR := bin/check
test-release:
	@rm -rf $(CHECK_DIR)
	@if $(DEPS) static; then $(MAKE) --no-print-directory release-$(HOST_ARCH) RELEASE_DIR=$(CHECK_DIR); \
	  else echo "test: no static build on this machine (the line above says why): the release check is skipped"; fi

# Fully static binaries (libseccomp and the C library linked in; pure-Go
# DNS and user lookups) for linux/amd64 and linux/arm64, cross-compiled for
# the architecture that is not this machine's, then checked: static (what
# ldd calls "not a dynamic executable"), the right architecture, and run in
# a minimal root (the binary alone) with the jail enforcing.
RELEASE_DIR := bin/release
HOST_ARCH   := $(shell $(GO) env GOARCH)
BUILD_DATE   = $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
RELEASE_LDFLAGS = -s -w -linkmode external -extldflags '-static' $(STAMP) -X main.buildDate=$(BUILD_DATE)
TRIPLET_amd64 := x86_64-linux-gnu
TRIPLET_arm64 := aarch64-linux-gnu
# Cross-compiling: the target's gcc, and pkg-config looking only at the
# target's multiarch directory.
CROSS = $(if $(filter $(HOST_ARCH),$*),,CC=$(TRIPLET_$*)-gcc PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/usr/lib/$(TRIPLET_$*)/pkgconfig:/usr/share/pkgconfig)

release: release-amd64 release-arm64
	BRIG_RELEASE_DIR=$(CURDIR)/$(RELEASE_DIR) BRIG_RELEASE_COMMIT=$(COMMIT) $(GO) test -count=1 -run '^TestRelease' -v ./internal/build/
	@ls -l $(RELEASE_DIR)

release-amd64 release-arm64: release-%:
	@$(DEPS) $(if $(filter $(HOST_ARCH),$*),static musl,$*)
	@mkdir -p $(RELEASE_DIR)
	$(CROSS) GOOS=linux GOARCH=$* GO=$(GO) LDFLAGS="$(RELEASE_LDFLAGS)" sh internal/build/build.sh $(RELEASE_DIR)/brig-linux-$* -trimpath -tags 'netgo osusergo'

# make install [PREFIX=/usr/local] [DESTDIR=] [INSTALL_BIN=bin/brig]: the
# binary, bash/zsh/fish completions, the man page and, on AppArmor machines,
# brig's AppArmor profile; make uninstall removes exactly those files. INSTALL_BIN=bin/release/brig-linux-amd64 installs the
# static release instead.
PREFIX      ?= /usr/local
DESTDIR     ?=
# Where AppArmor keeps its profiles, and its parser: on an AppArmor machine
# make install also installs (and loads) a profile letting brig create user
# namespaces (internal/build/apparmor/brig).
APPARMOR_DIR    ?= /etc/apparmor.d
APPARMOR_PARSER ?= apparmor_parser
INSTALL_BIN ?= $(BIN)
install: build
	PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' APPARMOR_DIR='$(APPARMOR_DIR)' APPARMOR_PARSER='$(APPARMOR_PARSER)' sh internal/build/install.sh install '$(INSTALL_BIN)' '$(BIN)'

uninstall:
	PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' APPARMOR_DIR='$(APPARMOR_DIR)' APPARMOR_PARSER='$(APPARMOR_PARSER)' sh internal/build/install.sh uninstall

# Jail spawn overhead against a plain exec (and bubblewrap when installed),
# then the Go benchmarks.
bench: build
	@$(DEPS) bench
	$(GO) run ./test/bench/roundtrip -runs 5
	$(GO) run ./test/bench/spawn -runs 400
	$(GO) run ./test/bench/agent -calls 50 -runs 5
	$(GO) test -run '^$$' -bench . -benchtime 200x ./supervisor/
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/session/
	$(GO) test -run '^$$' -bench . -benchtime 5x ./internal/checkpoint/
	$(GO) test -run '^$$' -bench . -benchtime 200x ./internal/auditlog/
	$(GO) test -run '^$$' -bench 'CompileBash|DecideBash' -benchtime 200x ./policy/
	$(GO) test -run '^$$' -bench 'Repositories|WorkerRuleset' -benchtime 200x ./jail/
	$(GO) test -run '^$$' -bench BuildRequest -benchtime 200x ./agent/provider/anthropic/
	$(GO) test -run '^$$' -bench FirstRequest -benchtime 10x ./agent/provider/internal/endpoint/
	$(GO) test -run '^$$' -bench Search -benchtime 3x ./tools/
	$(GO) test -run '^$$' -bench Build -benchtime 2000x ./internal/envguard/
	$(GO) test -run '^$$' -bench DenialNotes -benchtime 200x ./tools/
	$(GO) test -run '^$$' -bench . -benchtime 200x ./internal/egress/
	$(GO) run ./test/bench/tui -runs 20 -turns 100
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/tui/

clean:
	rm -rf bin
