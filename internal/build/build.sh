#!/bin/sh
# build.sh OUT [GO BUILD FLAGS...]: builds brig into OUT with its child
# programs carried inside it (internal/jailexe): cmd/brig-jail (the
# worker, with the Go tools) twice — in full, and light (built with the
# brig_light_worker tag: without the tools internal/jailtools.FullOnly
# names) —, cmd/brig-jail-init (every call's init, without them) and
# cmd/brig-render (the TUI's renderer). They are built
# first with the same go build flags, then added to internal/jailexe
# through go build's -overlay with a file that embeds them (nothing is
# written into the source tree), and their SHA-256 sums are stamped into
# brig so that brig runs only the programs it was built with. LDFLAGS
# (environment) are the link flags of brig and the worker; GOOS, GOARCH,
# CC, CGO_* and the rest of go's environment pass through. None links
# libseccomp: brig compiles the seccomp programs and the jail loads their
# bytes. The renderer is pure Go (CGO_ENABLED=0: static); init and the
# worker start commands through a C clone (jail/spawn.go; init does for
# a command in fresh namespaces, jail/direct.go), so they use cgo: they
# are linked with musl where the machine has musl-gcc (see carried_cc
# below), else with the system's C library, statically where the machine
# can (the release links everything so): a dynamic one spends a few ms of
# every call in the loader. brig itself (libseccomp) is
# static likewise where it can be (see the end).
# make build, make release and the tests' brig (test/brigbin) all use it.
set -eu
out=$1
shift
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
go=${GO:-go}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# jailprog PKG NAME [GO BUILD FLAGS...]: a pure-Go carried program into
# $tmp/NAME (static without asking: LDFLAGS' external linking needs cgo).
jailprog() {
	pkg=$1 name=$2
	shift 2
	CGO_ENABLED=0 "$go" build "$@" -ldflags "-s -w" -o "$tmp/$name" "$pkg"
}
# tagsof [GO BUILD FLAGS...]: the build tags the flags give (the last
# -tags wins, as with go build), comma-separated.
tagsof() {
	t=
	while [ $# -gt 0 ]; do
		case $1 in
		-tags) t=${2:-} && shift ;;
		-tags=*) t=${1#-tags=} ;;
		esac
		shift
	done
	printf '%s' "$t" | tr ' ' ','
}
# The carried programs that use cgo (init, the workers) are linked with
# musl where this machine has it (musl-gcc) and builds for its own
# architecture. Init starts for every call and a worker for every Go
# tool's, and a static glibc's start-up asks the CPU about itself with
# cpuid some seventy times, each a trap to the hypervisor on a virtual
# machine (4.4 us here): musl asks nothing. Measured here: the init
# program's start 2.0-2.7 -> 1.5-1.6 ms of CPU (perf stat, 300 runs),
# its samples in a 200-call session -5%, and the carried programs 2.4 MB
# smaller; end to end below what the round trip resolves (test/bench/HISTORY.md).
# CARRIED_CC names another compiler for them; CARRIED_CC= (empty) uses
# cgo's own.
carried_cc=${CARRIED_CC-auto}
if [ "$carried_cc" = auto ]; then
	carried_cc=
	if [ -z "${CC:-}" ] && command -v musl-gcc >/dev/null 2>&1 &&
		[ "$("$go" env GOARCH)" = "$("$go" env GOHOSTARCH)" ]; then
		carried_cc=musl-gcc
	fi
fi
# carried_c is what brig version reports (jailexe.CarriedC): musl when
# every cgo program was linked with it, else the system's C library (a
# compiler that targets musl already, as Alpine's, counts as musl).
carried_c=system
case $carried_cc in *musl*) carried_c=musl ;; esac
if [ -z "$carried_cc" ]; then
	case $(${CC:-$("$go" env CC)} -dumpmachine 2>/dev/null) in *musl*) carried_c=musl ;; esac
fi
# cgoprog PKG NAME EXTRA_TAGS [GO BUILD FLAGS...]: a carried program that
# uses cgo (the worker, init) into $tmp/NAME, built with EXTRA_TAGS besides
# the caller's tags: with $carried_cc (always static) when set, else
# static where the machine can link so.
cgoprog() {
	pkg=$1 name=$2 extra=$3
	shift 3
	tags=$(tagsof "$@")
	if [ -n "$carried_cc" ]; then
		if CC=$carried_cc "$go" build "$@" -tags "netgo,osusergo${tags:+,$tags}${extra:+,$extra}" -ldflags "${LDFLAGS:-} -s -w -linkmode external -extldflags -static" -o "$tmp/$name" "$pkg" 2>"$tmp/carried.log"; then
			return 0
		fi
		echo "build.sh: $name is linked with the system's C library: linking it with $carried_cc failed ($(grep -v '^[[:space:]]*$' "$tmp/carried.log" | tail -n 1))" >&2
		carried_c=system
	fi
	case " ${LDFLAGS:-} $* " in
	*-static* | *" -tags "*) ;; # the caller chose how to link (make release)
	*)
		if "$go" build "$@" -tags "netgo,osusergo${extra:+,$extra}" -ldflags "${LDFLAGS:-} -s -w -linkmode external -extldflags -static" -o "$tmp/$name" "$pkg" 2>"$tmp/static.log"; then
			return 0
		fi
		echo "build.sh: $name is linked dynamically: a static link failed ($(grep -v '^[[:space:]]*$' "$tmp/static.log" | tail -n 1)); sh internal/build/deps.sh static installs the static C library" >&2
		;;
	esac
	"$go" build "$@" -tags "${tags}${tags:+${extra:+,}}${extra}" -ldflags "${LDFLAGS:-} -s -w" -o "$tmp/$name" "$pkg"
}
# The worker with every Go tool, and the light one that leaves out the
# tools internal/jailtools.FullOnly names (and their libraries): the
# supervisor starts the light one for every other call.
cgoprog ./cmd/brig-jail brig-jail '' "$@"
cgoprog ./cmd/brig-jail brig-jail-light brig_light_worker "$@"
cgoprog ./cmd/brig-jail-init brig-jail-init '' "$@"
jailprog ./cmd/brig-render brig-render "$@"
sum=$(sha256sum "$tmp/brig-jail" | cut -d' ' -f1)
lightsum=$(sha256sum "$tmp/brig-jail-light" | cut -d' ' -f1)
initsum=$(sha256sum "$tmp/brig-jail-init" | cut -d' ' -f1)
rendersum=$(sha256sum "$tmp/brig-render" | cut -d' ' -f1)
# The file that embeds them, added to internal/jailexe by the overlay too.
cat >"$tmp/carried.go" <<'EOF'
// Code generated by internal/build/build.sh for this build only; it is in
// no source tree.

package jailexe

import _ "embed"

//go:embed bin/brig-jail
var carriedWorker string

//go:embed bin/brig-jail-light
var carriedLight string

//go:embed bin/brig-jail-init
var carriedInit string

//go:embed bin/brig-render
var carriedRender string

func init() {
	embedded[workerName] = carriedWorker
	embedded[lightName] = carriedLight
	embedded[initName] = carriedInit
	embedded[renderName] = carriedRender
}
EOF
printf '{"Replace":{"%s":"%s","%s":"%s","%s":"%s","%s":"%s","%s":"%s"}}\n' \
	"$root/internal/jailexe/bin/brig-jail" "$tmp/brig-jail" \
	"$root/internal/jailexe/bin/brig-jail-light" "$tmp/brig-jail-light" \
	"$root/internal/jailexe/bin/brig-jail-init" "$tmp/brig-jail-init" \
	"$root/internal/jailexe/bin/brig-render" "$tmp/brig-render" \
	"$root/internal/jailexe/carried.go" "$tmp/carried.go" >"$tmp/overlay.json"
sums="-X brig/internal/jailexe.Sum=$sum -X brig/internal/jailexe.LightSum=$lightsum -X brig/internal/jailexe.InitSum=$initsum -X brig/internal/jailexe.RenderSum=$rendersum -X brig/internal/jailexe.CarriedC=$carried_c"
# brig itself is built with the brig_carrier tag: it runs web_fetch in
# the full worker it carries, so it links neither the fetch nor the HTML
# converter and character sets (tools/webfetch_carrier.go), whose
# packages' set-up cost every start of brig 2.5-4 ms here.
# brig itself links libseccomp (cgo). Like the worker, it is static where
# the machine can link so and the caller chose nothing (the release does
# the same with its own flags): the dynamic loader and its relocations
# cost about a millisecond of every start (20 × 50 runs of brig --help:
# 6.3 → 5.2 ms; brig sandbox -- true 25 → 22 ms), with pure-Go DNS and
# user lookups, as in the release.
case " ${LDFLAGS:-} $* " in
*-static* | *" -tags "*) ;;
*)
	if "$go" build "$@" -tags netgo,osusergo,brig_carrier -overlay "$tmp/overlay.json" -ldflags "${LDFLAGS:-} $sums -linkmode external -extldflags -static" -o "$out" ./cmd/brig 2>"$tmp/static.log"; then
		exit 0
	fi
	echo "build.sh: brig is linked dynamically: a static link failed ($(grep -v '^[[:space:]]*$' "$tmp/static.log" | tail -n 1)); sh internal/build/deps.sh static installs the static C library and libseccomp" >&2
	;;
esac
tags=$(tagsof "$@")
"$go" build "$@" -tags "${tags}${tags:+,}brig_carrier" -overlay "$tmp/overlay.json" -ldflags "${LDFLAGS:-} $sums" -o "$out" ./cmd/brig
