package supervisor

import "golang.org/x/sys/unix"

// decodeLegacy decodes the path-taking metadata syscalls x86_64 has beside
// the *at forms (arm64 has only those).
func decodeLegacy(d *seccompData) (metaOp, bool) {
	a := d.Args
	switch int(d.Nr) {
	case unix.SYS_CHMOD:
		return metaOp{kind: "chmod", dirfd: atFDCWD, path: a[0], mode: uint32(a[1])}, true
	case unix.SYS_CHOWN:
		return metaOp{kind: "chown", dirfd: atFDCWD, path: a[0], uid: int(int32(a[1])), gid: int(int32(a[2]))}, true
	case unix.SYS_LCHOWN:
		return metaOp{kind: "chown", dirfd: atFDCWD, path: a[0], uid: int(int32(a[1])), gid: int(int32(a[2])), nofollow: true}, true
	case unix.SYS_UTIME:
		return metaOp{kind: "utimes", dirfd: atFDCWD, path: a[0], times: a[1], timesFmt: "utimbuf"}, true
	case unix.SYS_UTIMES:
		return metaOp{kind: "utimes", dirfd: atFDCWD, path: a[0], times: a[1], timesFmt: "timeval"}, true
	case unix.SYS_FUTIMESAT:
		op := metaOp{kind: "utimes", dirfd: int32(a[0]), path: a[1], times: a[2], timesFmt: "timeval"}
		op.fdOnly = op.path == 0 && op.dirfd != atFDCWD
		return op, true
	}
	return metaOp{}, false
}
