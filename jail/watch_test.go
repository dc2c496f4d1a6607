package jail

import (
	"os"
	"testing"
)

// TestWatchCountsAWorkspaceInTmp: with a private /tmp, a write grant below
// /tmp (a workspace there, carried into the call's view) is on the real
// filesystem, and its free space is watched like any other; /tmp itself
// is the call's tmpfs, watched as such. Control: a grant outside /tmp.
func TestWatchCountsAWorkspaceInTmp(t *testing.T) {
	inTmp, err := os.MkdirTemp("/tmp", "brig-watch-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(inTmp)
	outside, err := os.MkdirTemp("/var/tmp", "brig-watch-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	lim := DefaultLimits()
	for _, dir := range []string{outside, inTmp} {
		spec := Spec{PrivateTmp: true, Limits: lim, Paths: []PathRule{{Path: "/tmp", Access: Write}, {Path: dir, Access: Write}}}
		w := newWatch(spec, true, false)
		if len(w.disks) != 1 || w.disks[0].path != dir {
			t.Errorf("grant %s: watched disks %+v, want the one it is on", dir, w.disks)
		}
		if len(w.tmp) == 0 {
			t.Errorf("grant %s: the private /tmp is not watched as tmpfs", dir)
		}
	}
}
