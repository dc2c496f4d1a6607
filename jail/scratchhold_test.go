package jail

import (
	"os"
	"time"
)

// ScratchHoldFile, while it exists, keeps the masks' scratch tmpfs over
// /tmp for ScratchHold in this package's jail children (they are its test
// binary, re-executed): TestGrantUnderTmpWhileTheMasksAreMade. A fixed
// path under /tmp, since a child's environment is cleared; init looks
// before the scratch hides it.
const (
	ScratchHoldFile = "/tmp/brig-jail-test-hold-scratch"
	ScratchHold     = 50 * time.Millisecond
)

func init() {
	scratchHold = func() time.Duration {
		if _, err := os.Stat(ScratchHoldFile); err == nil {
			return ScratchHold
		}
		return 0
	}
}
