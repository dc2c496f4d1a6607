//go:build !brig_light_worker

package jailtools

const lightBuild = false
