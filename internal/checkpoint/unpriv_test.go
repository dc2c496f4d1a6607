package checkpoint

import (
	"bytes"
	"testing"

	"brig/internal/unprivtest"
)

// envUnpriv marks the re-executed unprivileged pass.
const envUnpriv = "BRIG_CHECKPOINT_UNPRIV"

// TestUnprivileged runs every test of the package again as uid/gid 65534 (setpriv):
// without root's power over permissions, the restore must still put back
// modes and files, and a planted symlink must still not be written
// through.
func TestUnprivileged(t *testing.T) {
	out := unprivtest.Rerun(t, envUnpriv, "")
	for _, name := range []string{"TestSymlinkPlanted", "TestPermissions", "TestChmodDoesNotHideChanges"} {
		if !bytes.Contains(out, []byte("--- PASS: "+name)) {
			t.Fatalf("the unprivileged pass did not pass %s:\n%s", name, out)
		}
	}
}
