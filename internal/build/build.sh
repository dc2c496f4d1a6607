#!/bin/sh
# build.sh OUT [GO BUILD FLAGS...]: builds brig into OUT with its jail child
# (cmd/brig-jail) carried inside it (internal/jailexe). The child is built
# first with the same flags, then placed where the embed looks for it
# through go build's -overlay (nothing is written into the source tree),
# and its SHA-256 is stamped into brig so that brig runs only the child it
# was built with. LDFLAGS (environment) are the link flags of both; GOOS,
# GOARCH, CC, CGO_* and the rest of go's environment pass through.
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
"$go" build "$@" -ldflags "${LDFLAGS:-} -s -w" -o "$tmp/brig-jail" ./cmd/brig-jail
sum=$(sha256sum "$tmp/brig-jail" | cut -d' ' -f1)
printf '{"Replace":{"%s":"%s"}}\n' "$root/internal/jailexe/bin/brig-jail" "$tmp/brig-jail" >"$tmp/overlay.json"
"$go" build "$@" -overlay "$tmp/overlay.json" -ldflags "${LDFLAGS:-} -X brig/internal/jailexe.Sum=$sum" -o "$out" ./cmd/brig
