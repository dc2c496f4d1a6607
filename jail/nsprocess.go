package jail

import "os"

// NSProcess is a program StartInNamespaces starts.
type NSProcess struct {
	// Path is the program. Empty, nothing is executed: the child exits
	// (status 0) as soon as its ID maps are written, which proves the
	// namespaces and the maps can be made (a probe).
	Path string
	Args []string // argv, Args[0] included
	Env  []string
	Dir  string
	// Files[i] becomes the program's descriptor i (nil: /dev/null); every
	// other descriptor is closed at its exec.
	Files []*os.File
	// Cloneflags are the CLONE_NEW* flags of its namespaces.
	Cloneflags uintptr
	// UIDMap and GIDMap, when set, are the one-line ID maps the program
	// writes for itself in its new user namespace (setgroups is denied
	// first): a process may map only its own ids so, which is all a jail
	// needs.
	UIDMap, GIDMap string
	// AmbientCaps are carried across its exec (an unprivileged program
	// keeps no capability across exec otherwise).
	AmbientCaps []uintptr
	// TimerSlack, when not 0, is the program's timer slack in ns
	// (PR_SET_TIMERSLACK; its threads and children inherit it):
	// InitTimerSlack for a jail's init.
	TimerSlack uint64
}
