#!/bin/sh
# build.sh OUT [GO BUILD FLAGS...]: builds brig into OUT with its jail
# programs carried inside it (internal/jailexe): cmd/brig-jail (the
# worker, with the Go tools) and cmd/brig-jail-init (every call's init,
# without them). They are built first with the same flags, then placed
# where the embed looks for them through go build's -overlay (nothing is
# written into the source tree), and their SHA-256 sums are stamped into
# brig so that brig runs only the programs it was built with. LDFLAGS
# (environment) are the link flags of all three; GOOS, GOARCH, CC, CGO_*
# and the rest of go's environment pass through. Where the machine can
# link statically, the jail programs are (the release links everything
# so): a dynamic one spends a few ms of every call in the loader.
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
# jailprog PKG NAME [GO BUILD FLAGS...]: one jail program into $tmp/NAME.
jailprog() {
	pkg=$1 name=$2
	shift 2
	case " ${LDFLAGS:-} $* " in
	*-static* | *" -tags "*) ;; # the caller chose how to link (make release)
	*)
		if "$go" build "$@" -tags 'netgo osusergo' -ldflags "${LDFLAGS:-} -s -w -linkmode external -extldflags -static" -o "$tmp/$name" "$pkg" 2>"$tmp/static.log"; then
			return 0
		fi
		echo "build.sh: $name is linked dynamically: a static link failed ($(grep -v '^[[:space:]]*$' "$tmp/static.log" | tail -n 1)); sh internal/build/deps.sh static installs libseccomp.a and the static C library" >&2
		;;
	esac
	"$go" build "$@" -ldflags "${LDFLAGS:-} -s -w" -o "$tmp/$name" "$pkg"
}
jailprog ./cmd/brig-jail brig-jail "$@"
jailprog ./cmd/brig-jail-init brig-jail-init "$@"
sum=$(sha256sum "$tmp/brig-jail" | cut -d' ' -f1)
initsum=$(sha256sum "$tmp/brig-jail-init" | cut -d' ' -f1)
printf '{"Replace":{"%s":"%s","%s":"%s"}}\n' \
	"$root/internal/jailexe/bin/brig-jail" "$tmp/brig-jail" \
	"$root/internal/jailexe/bin/brig-jail-init" "$tmp/brig-jail-init" >"$tmp/overlay.json"
"$go" build "$@" -overlay "$tmp/overlay.json" -ldflags "${LDFLAGS:-} -X brig/internal/jailexe.Sum=$sum -X brig/internal/jailexe.InitSum=$initsum" -o "$out" ./cmd/brig
