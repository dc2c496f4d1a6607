package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"brig/jail"
	"brig/supervisor"
)

func main() {
	if jail.IsChild() {
		jail.ChildMain(nil)
	}
	ctx := context.Background()
	sup, _ := supervisor.New(ctx, supervisor.Options{Prewarm: true})
	ws, _ := os.MkdirTemp("/var/tmp", "ws")
	defer os.RemoveAll(ws)
	prof := supervisor.Profile{Workspace: ws, Dir: ws, Home: "/root", ParentEnv: os.Environ(), Limits: jail.DefaultLimits(), Namespaces: sup.Namespaces()}
	spec, err := prof.Spec()
	if err != nil {
		panic(err)
	}
	try := func(name string, s jail.Spec) {
		var d []time.Duration
		for i := 0; i < 3; i++ {
			t0 := time.Now()
			res, err := sup.Run(ctx, s, jail.Invocation{Argv: []string{"/usr/bin/true"}}, supervisor.IO{})
			if err != nil || res.ExitCode != 0 {
				panic(fmt.Sprint(err, res))
			}
			d = append(d, time.Since(t0))
		}
		slices.Sort(d)
		fmt.Printf("%-30s median %v\n", name, d[len(d)/2])
	}
	try("full", spec)
	s := spec
	s.Layers.NoSeccomp = true
	try("no seccomp", s)
	s = spec
	s.Layers.NoLandlock = true
	try("no landlock", s)
	s = spec
	s.Limits.Processes = 0
	try("no cgroup", s)
	s = spec
	s.Protected = nil
	try("no protected", s)
	s = spec
	s.Layers.NoNamespaces = true
	s.PrivateTmp = false
	try("no ns", s)
	s.Limits.Processes = 0
	s.Layers.NoSeccomp = true
	s.Layers.NoLandlock = true
	try("nothing", s)
}
