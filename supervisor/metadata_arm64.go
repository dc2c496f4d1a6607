package supervisor

// decodeLegacy: arm64 has only the *at forms of the metadata syscalls.
func decodeLegacy(d *seccompData) (metaOp, bool) { return metaOp{}, false }
