//go:build brig_light_worker

package jailtools

// lightBuild: this test binary is the light worker's build (make test
// runs this package's tests with the brig_light_worker tag too).
const lightBuild = true
