package jail

import (
	"errors"
	"syscall"
	"time"
)

// An exec can be refused with ETXTBSY for an instant after the program was
// written: the writer's descriptor is closed, but a process cloned while
// it was open holds a copy until its own exec or exit closes it (the
// copy is close-on-exec; golang/go#22315 is the same race). The carried
// programs are written at brig's start while its first children are
// cloned, so a worker's or init's exec that meets one is tried again.
const textBusyTries = 10

// retryTextBusy runs start until it returns anything but ETXTBSY, at most
// textBusyTries times, calling wait(try) between tries.
func retryTextBusy(start func() error, wait func(try int)) error {
	var err error
	for try := 0; try < textBusyTries; try++ {
		if err = start(); !errors.Is(err, syscall.ETXTBSY) {
			return err
		}
		if try < textBusyTries-1 {
			wait(try)
		}
	}
	return err
}

// textBusyWait waits a little longer at each try: 55 ms over all ten.
func textBusyWait(try int) { time.Sleep(time.Duration(try+1) * time.Millisecond) }
