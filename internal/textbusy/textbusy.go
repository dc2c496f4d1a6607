// Package textbusy retries the start of a program that brig itself has
// just written. An exec can be refused with ETXTBSY for an instant after
// the program was written: the writer's descriptor is closed, but a
// process cloned while it was open holds a copy until its own exec or
// exit closes it (the copy is close-on-exec; golang/go#22315 is the same
// race). brig writes its carried programs (the jail's init and workers,
// the TUI's renderer) at its start while its first children are cloned,
// so a start that meets one is tried again.
//
// It owns only that retry; what is started, and how, is the caller's.
package textbusy

import (
	"errors"
	"syscall"
	"time"
)

// Tries is how many times Retry tries a start that meets ETXTBSY.
const Tries = 10

// Retry runs start until it returns anything but ETXTBSY, at most Tries
// times, calling wait(try) between tries (Wait when nil).
func Retry(start func() error, wait func(try int)) error {
	if wait == nil {
		wait = Wait
	}
	var err error
	for try := 0; try < Tries; try++ {
		if err = start(); !errors.Is(err, syscall.ETXTBSY) {
			return err
		}
		if try < Tries-1 {
			wait(try)
		}
	}
	return err
}

// Wait waits a little longer at each try: 55 ms over all ten.
func Wait(try int) { time.Sleep(time.Duration(try+1) * time.Millisecond) }
