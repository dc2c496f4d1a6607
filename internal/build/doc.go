// Package build holds the scripts the Makefile runs to prepare a machine
// and to install brig, and the tests that prove them: deps.sh finds what
// the build, the tests and the static release need and installs what is
// missing (or stops with the one command to run); install.sh is make
// install and make uninstall; TestRelease checks the static release
// binaries (no dynamic loader, no shared library, the right architecture)
// and runs the native one in a minimal root where only the binary exists.
//
// Nothing in brig imports this package, and it never changes the machine
// outside temporary directories: its tests run the scripts against stub
// package managers.
package build
