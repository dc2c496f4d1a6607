#!/bin/sh
# deps.sh GROUP... — find what brig's build, tests or release builds need on
# this machine and install what is missing with the system's package manager
# (apt-get, dnf, pacman or apk), printing one line for each install. Where it
# cannot install (no package manager, not root and no usable sudo, or
# BRIG_DEPS=check), it stops with one line naming the exact command to run.
#
# Groups:
#   build   a C compiler for cgo, pkg-config, libseccomp's headers and library
#   test    what `make test` runs besides the build: gcc (the escape suite's C
#           probe), setpriv (its unprivileged pass), ps and pgrep, git,
#           python3 with pytest, tmux; npm is optional (the third-party MCP
#           server test)
#   static  libseccomp.a and a static C library (`make release`)
#   musl    optional: musl-gcc, to link the carried programs with musl
#   bench   optional: bubblewrap, which `make bench` runs beside
#           `brig sandbox -- true` (issue 24's target is to be faster)
#   arm64   to cross-compile the release for arm64 on another machine: an
#   amd64   aarch64 (x86_64) gcc and that architecture's libseccomp.a (Debian
#           multiarch: dpkg --add-architecture); qemu to run it is optional
#
# Environment: BRIG_DEPS=check never installs; CC is the C compiler cgo uses
# (default: `go env CC`); PKG_CONFIG_PATH / PKG_CONFIG_LIBDIR are honoured.
#
# POSIX sh on purpose: a fresh Alpine has no bash.
set -u

say() { printf 'deps: %s\n' "$*" >&2; }

# --- the machine ------------------------------------------------------------

pm=""
for c in apt-get dnf pacman apk; do
	if command -v "$c" >/dev/null 2>&1; then
		pm=$c
		break
	fi
done

cc=${CC:-}
if [ -z "$cc" ]; then
	cc=$(go env CC 2>/dev/null) || cc=""
	[ -n "$cc" ] || cc=gcc
fi
# The compiler's first word is its program (CC may carry flags).
cc_prog=${cc%% *}

uid=$(id -u 2>/dev/null || echo 0)

# --- requirements -----------------------------------------------------------
# Each requirement has a check (have_X), a description (what_X) and a package
# name per package manager (pkg_X). An empty package name means this package
# manager has none: the stop line then says what to do instead.

have_cc() { command -v "$cc_prog" >/dev/null 2>&1; }
what_cc="a C compiler for cgo ($cc_prog)"
pkg_cc() { case $pm in apk) echo "gcc musl-dev" ;; *) echo gcc ;; esac; }

have_pkgconfig() { command -v pkg-config >/dev/null 2>&1; }
what_pkgconfig="pkg-config (cgo finds libseccomp with it)"
pkg_pkgconfig() {
	case $pm in
	apt-get) echo pkg-config ;;
	dnf) echo pkgconf-pkg-config ;;
	*) echo pkgconf ;;
	esac
}

# libseccomp: pkg-config knows it, and its header and library are where the
# .pc file says (the same lookup cgo makes).
have_seccomp() {
	have_pkgconfig || return 1
	pkg-config --exists libseccomp 2>/dev/null || return 1
	inc=$(pkg-config --variable=includedir libseccomp 2>/dev/null)
	lib=$(pkg-config --variable=libdir libseccomp 2>/dev/null)
	[ -e "${inc:-/usr/include}/seccomp.h" ] || return 1
	for f in "$lib"/libseccomp.so "$lib"/libseccomp.a; do
		[ -e "$f" ] && return 0
	done
	return 1
}
what_seccomp="libseccomp headers and library (the seccomp filter is compiled with it)"
pkg_seccomp() {
	case $pm in
	apt-get | apk) echo libseccomp-dev ;;
	dnf) echo libseccomp-devel ;;
	pacman) echo libseccomp ;;
	esac
}

have_seccomp_static() {
	have_seccomp || return 1
	[ -e "$(pkg-config --variable=libdir libseccomp)/libseccomp.a" ]
}
what_seccomp_static="libseccomp.a (the static release links libseccomp in)"
pkg_seccomp_static() {
	case $pm in
	apt-get) echo libseccomp-dev ;;
	apk) echo libseccomp-static ;;
	dnf) echo libseccomp-static ;;
	pacman) echo libseccomp ;;
	esac
}

# A static C library: link an empty program with -static.
have_libc_static() {
	have_cc || return 1
	t=$(mktemp "${TMPDIR:-/tmp}/brig-deps-XXXXXX") || return 1
	printf 'int main(void){return 0;}\n' | $cc -x c - -static -o "$t" >/dev/null 2>&1
	_rc=$?
	rm -f "$t"
	return $_rc
}
what_libc_static="a static C library (libc.a, for the static release)"
pkg_libc_static() {
	case $pm in
	apt-get) echo libc6-dev ;;
	dnf) echo glibc-static ;;
	pacman) echo glibc ;;
	apk) echo musl-dev ;;
	esac
}

have_gcc() { command -v gcc >/dev/null 2>&1; }
what_gcc="gcc (the escape suite builds its C probe with it)"
pkg_gcc() { pkg_cc; }

have_setpriv() { command -v setpriv >/dev/null 2>&1; }
what_setpriv="setpriv (the escape suite's pass as an unprivileged user)"
pkg_setpriv() {
	case $pm in
	apt-get)
		# Debian moved setpriv out of util-linux after bookworm.
		if apt-cache show setpriv >/dev/null 2>&1; then echo setpriv; else echo util-linux; fi
		;;
	apk) echo setpriv ;;
	*) echo util-linux ;;
	esac
}

have_git() { command -v git >/dev/null 2>&1; }
what_git="git (workspaces in the tests are repositories)"
pkg_git() { echo git; }

have_pytest() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1; }
what_pytest="python3 with pytest (/usr/bin/python3; the jail runs pytest and python scripts)"
pkg_pytest() {
	case $pm in
	apt-get | dnf) echo python3-pytest ;;
	pacman) echo python-pytest ;;
	apk) echo py3-pytest ;;
	esac
}

have_procps() { command -v ps >/dev/null 2>&1 && command -v pgrep >/dev/null 2>&1; }
what_procps="ps and pgrep (tests look for the processes a call must not leave behind)"
pkg_procps() {
	case $pm in
	apt-get | apk) echo procps ;;
	*) echo procps-ng ;;
	esac
}

have_tmux() { command -v tmux >/dev/null 2>&1; }
what_tmux="tmux (the terminal UI tests drive brig in it)"
pkg_tmux() { echo tmux; }

# musl's compiler, with which build.sh links the carried programs that
# use cgo: optional, as they work with the system's C library too, only
# start slower (build.sh says why). A compiler that targets musl already
# (Alpine's) needs nothing more.
have_musl() {
	command -v musl-gcc >/dev/null 2>&1 && return 0
	case $($cc -dumpmachine 2>/dev/null) in *musl*) return 0 ;; esac
	return 1
}
what_musl="musl-gcc (optional: init and the worker, which start for every call, start faster linked with musl)"
pkg_musl() {
	case $pm in
	apt-get) echo musl-tools ;;
	dnf) echo musl-gcc ;;
	pacman) echo musl ;;
	esac
}

have_bwrap() { command -v bwrap >/dev/null 2>&1; }
what_bwrap="bubblewrap (optional: make bench times bwrap --unshare-all beside brig sandbox)"
pkg_bwrap() { echo bubblewrap; }

have_npm() { command -v npm >/dev/null 2>&1; }
what_npm="npm (optional: the third-party MCP server test)"
pkg_npm() { echo npm; }

# Cross toolchains (groups amd64 and arm64 on a machine of the other
# architecture): the target's gcc and its libseccomp.a from Debian's
# multiarch. set_cross ARCH picks the names.
set_cross() {
	cross_arch=$1
	case $1 in
	arm64) cross_triplet=aarch64-linux-gnu cross_gccpkg=gcc-aarch64-linux-gnu cross_qemu=qemu-aarch64 ;;
	amd64) cross_triplet=x86_64-linux-gnu cross_gccpkg=gcc-x86-64-linux-gnu cross_qemu=qemu-x86_64 ;;
	esac
	cross_libdir=/usr/lib/$cross_triplet
	what_cross_cc="a cross compiler for $cross_arch, $cross_triplet-gcc"
	what_cross_seccomp="a $cross_arch libseccomp.a in $cross_libdir"
	what_cross_qemu="qemu user emulation for $cross_arch (optional: the release check runs the $cross_arch binary with it)"
}
have_cross_cc() { command -v "$cross_triplet-gcc" >/dev/null 2>&1; }
pkg_cross_cc() {
	case $pm in
	apt-get) echo "$cross_gccpkg" ;;
	dnf) [ "$cross_arch" = arm64 ] && echo gcc-aarch64-linux-gnu ;;
	pacman) [ "$cross_arch" = arm64 ] && echo aarch64-linux-gnu-gcc ;;
	esac
}
have_cross_seccomp() { [ -e "$cross_libdir/libseccomp.a" ] && [ -e "$cross_libdir/pkgconfig/libseccomp.pc" ]; }
pkg_cross_seccomp() { case $pm in apt-get) echo "libseccomp-dev:$cross_arch" ;; esac; }
have_cross_qemu() { command -v "$cross_qemu-static" >/dev/null 2>&1 || command -v "$cross_qemu" >/dev/null 2>&1; }
pkg_cross_qemu() { case $pm in apt-get) echo qemu-user-static ;; esac; }

# --- installing ---------------------------------------------------------------

# install_cmd PKG...: the command that installs the packages, without sudo.
install_cmd() {
	case $pm in
	apt-get) echo "apt-get install -y $*" ;;
	dnf) echo "dnf install -y $*" ;;
	pacman) echo "pacman -S --needed --noconfirm $*" ;;
	apk) echo "apk add $*" ;;
	esac
}

# sudo_prefix sets $sudo to what runs a command as root, or stops with the
# exact command when nothing can (which is why it takes that command).
sudo=""
sudo_prefix() {
	if [ "$uid" = 0 ]; then
		sudo=""
	elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
		sudo="sudo -n "
	elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
		say "installing needs root: sudo may ask for your password"
		sudo="sudo "
	elif command -v sudo >/dev/null 2>&1; then
		stop "$1" "run: sudo $2"
	else
		stop "$1" "run as root: $2"
	fi
}

# stop WHAT HOW: the one line saying what is missing and how to get it.
stop() {
	say "missing $1; $2"
	exit 1
}

# run_install PKG...: install with the package manager (its output goes to a
# log that is shown only when it fails). apt-get's package lists are
# refreshed once if the first try fails: a fresh container has none.
run_install() {
	log=$(mktemp "${TMPDIR:-/tmp}/brig-deps-log-XXXXXX") || return 1
	cmd=$(install_cmd "$@")
	case $pm in
	apt-get)
		# Wait for another apt to finish rather than fail on its lock.
		lock="-o DPkg::Lock::Timeout=300"
		${sudo}env DEBIAN_FRONTEND=noninteractive $cmd -q $lock >"$log" 2>&1 ||
			{ ${sudo}apt-get update -q $lock >>"$log" 2>&1 && ${sudo}env DEBIAN_FRONTEND=noninteractive $cmd -q $lock >>"$log" 2>&1; }
		;;
	*) ${sudo}$cmd >"$log" 2>&1 ;;
	esac
	_rc=$?
	if [ $_rc -ne 0 ]; then
		tail -n 15 "$log" >&2
	fi
	rm -f "$log"
	return $_rc
}

# ensure REQUIRED|OPTIONAL REQ...: check each requirement, install what is
# missing in one package-manager call, then check again.
ensure() {
	kind=$1
	shift
	missing="" what="" pkgs="" nopkg=""
	for r in "$@"; do
		"have_$r" && continue
		missing="$missing $r"
		eval "w=\$what_$r"
		what="${what:+$what, }$w"
		p=$("pkg_$r")
		if [ -z "$p" ] || [ -z "$pm" ]; then
			nopkg="${nopkg:+$nopkg, }$w"
		else
			case " $pkgs " in *" $p "*) ;; *) pkgs="${pkgs:+$pkgs }$p" ;; esac
		fi
	done
	[ -n "$missing" ] || return 0

	if [ -n "$nopkg" ]; then
		how="install it with your system's package manager"
		[ -z "$pm" ] && how="no apt-get, dnf, pacman or apk here: install it with your system's package manager"
		optional_or_stop "$kind" "$nopkg" "$how"
		return 0
	fi
	cmd=$(install_cmd $pkgs)
	if [ "${BRIG_DEPS:-}" = check ]; then
		root_cmd="sudo $cmd"
		[ "$uid" = 0 ] && root_cmd=$cmd
		optional_or_stop "$kind" "$what" "run: $root_cmd (BRIG_DEPS=check: nothing is installed)"
		return 0
	fi
	if [ "$kind" = optional ]; then
		# Never ask for a password for an optional test.
		if [ "$uid" != 0 ] && ! { command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; }; then
			say "skipping $what: to include it, run: sudo $cmd"
			return 0
		fi
	fi
	sudo_prefix "$what" "$cmd"
	say "installing $pkgs with $pm: $what"
	if ! run_install $pkgs; then
		optional_or_stop "$kind" "$what" "\`${sudo}$cmd\` failed (output above); run it yourself and fix what it says"
		return 0
	fi
	for r in $missing; do
		if ! "have_$r"; then
			eval "w=\$what_$r"
			optional_or_stop "$kind" "$w" "still not found after installing $pkgs; $(hint_$r 2>/dev/null || echo "check what $pm installed")"
		fi
	done
}

optional_or_stop() {
	if [ "$1" = optional ]; then
		say "skipping $2: $3"
	else
		stop "$2" "$3"
	fi
}

hint_seccomp() { echo "pkg-config must find libseccomp.pc (PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-}, PKG_CONFIG_LIBDIR=${PKG_CONFIG_LIBDIR:-})"; }
hint_seccomp_static() { echo "this distribution may not ship libseccomp.a: build libseccomp with --enable-static and point PKG_CONFIG_PATH at it"; }
hint_pytest() { echo "the tests run /usr/bin/python3 -m pytest"; }

# The cross libseccomp comes from Debian's multiarch: dpkg must know the
# architecture.
cross_dpkg_arch() {
	[ "$pm" = apt-get ] || return 0
	have_cross_seccomp && return 0
	dpkg --print-foreign-architectures 2>/dev/null | grep -qx "$cross_arch" && return 0
	add="dpkg --add-architecture $cross_arch && apt-get update"
	if [ "${BRIG_DEPS:-}" = check ]; then
		stop "$what_cross_seccomp" "run: sudo $add && sudo apt-get install -y libseccomp-dev:$cross_arch (BRIG_DEPS=check: nothing is installed)"
	fi
	sudo_prefix "$what_cross_seccomp" "$add"
	say "adding $cross_arch to dpkg's architectures (dpkg --add-architecture $cross_arch) for libseccomp-dev:$cross_arch"
	{ ${sudo}dpkg --add-architecture "$cross_arch" && ${sudo}apt-get update -q >/dev/null 2>&1; } ||
		stop "$what_cross_seccomp" "run: sudo $add"
}

[ $# -gt 0 ] || set -- build
for group in "$@"; do
	case $group in
	build) ensure required cc pkgconfig seccomp ;;
	test)
		ensure required cc pkgconfig seccomp gcc setpriv procps git pytest tmux
		ensure optional npm
		;;
	static) ensure required cc pkgconfig seccomp seccomp_static libc_static ;;
	musl) ensure optional musl ;;
	bench) ensure optional bwrap ;;
	amd64 | arm64)
		set_cross "$group"
		ensure required cross_cc
		cross_dpkg_arch
		ensure required cross_seccomp
		ensure optional cross_qemu
		;;
	*)
		say "unknown group $group (build, test, static, musl, bench, amd64 or arm64)"
		exit 2
		;;
	esac
done
exit 0
