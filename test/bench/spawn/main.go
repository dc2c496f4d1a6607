// Command spawn measures the jail's spawn overhead: the wall time of a whole
// jailed call of /bin/true against a plain exec of /bin/true, and against
// bubblewrap when it is installed, interleaved in one run so they share the
// machine's state. It prints median and p95 of each and the overheads.
//
// It is its own jail child (the supervisor re-executes this binary), so it
// dispatches the jail entry first, as brig's main does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"brig/jail"
	"brig/policy"
	"brig/supervisor"
)

func main() {
	if jail.IsChild() {
		jail.ChildMain(nil)
	}
	runs := flag.Int("runs", 400, "timed runs per variant")
	warm := flag.Int("warmup", 20, "untimed runs per variant first")
	other := flag.String("child", "", "also time prewarmed calls whose jail child is this binary (another build of this bench): an A/B of a jail-side change in one run. Calibrate first: with a copy of this same build the second supervisor measured 0.15-0.2 ms slower here")
	flag.Parse()
	if err := run(*runs, *warm, *other); err != nil {
		fmt.Fprintln(os.Stderr, "spawn:", err)
		os.Exit(1)
	}
}

type variant struct {
	name string
	call func() error
	// settle is an untimed pause after each call: the prewarmed supervisor
	// starts the next child in the background, as it does between an
	// agent's calls, and that must not run into the other variants' timing.
	settle time.Duration
	d      []time.Duration
}

func run(runs, warm int, other string) error {
	ctx := context.Background()
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	sup, err := supervisor.New(ctx, supervisor.Options{})
	if err != nil {
		return err
	}
	// The agent keeps a started jail child waiting for the next call.
	warmSup, err := supervisor.New(ctx, supervisor.Options{Prewarm: true})
	if err != nil {
		return err
	}
	defer warmSup.Close()
	ws, err := os.MkdirTemp("", "brig-bench-ws-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	home, _ := os.UserHomeDir()
	prof := policy.Profile{
		Workspace: ws, Dir: ws, Home: home, ParentEnv: os.Environ(),
		Limits: jail.DefaultLimits(), Namespaces: sup.Namespaces(),
	}
	if !prof.Namespaces {
		prof.CallTmp = ws
	}
	spec, err := prof.Spec()
	if err != nil {
		return err
	}
	vs := []*variant{
		{name: "plain exec of true", call: func() error { return exec.Command(truePath).Run() }},
		{name: "brig jail, cold", call: func() error { return jailTrue(ctx, sup, spec, truePath) }},
		{name: "brig jail, prewarmed", call: func() error {
			return jailTrue(ctx, warmSup, spec, truePath)
		}, settle: 40 * time.Millisecond},
	}
	if other != "" {
		otherSup, err := supervisor.New(ctx, supervisor.Options{Prewarm: true, Executable: other})
		if err != nil {
			return err
		}
		defer otherSup.Close()
		vs = append(vs, &variant{name: "prewarmed, -child binary", call: func() error {
			return jailTrue(ctx, otherSup, spec, truePath)
		}, settle: 40 * time.Millisecond})
	}
	if bw, err := exec.LookPath("bwrap"); err == nil {
		vs = append(vs, &variant{name: "bwrap --unshare-all, true", call: func() error {
			return exec.Command(bw, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", truePath).Run()
		}})
	}
	for i := 0; i < warm+runs; i++ {
		// Each round starts at the next variant, so that none always
		// follows the same one (a cold call's exit, or another
		// supervisor's refill, would otherwise weigh on one variant only:
		// the same build measured 0.2 ms apart as "prewarmed" and
		// "-child" in a fixed order).
		for k := range vs {
			v := vs[(i+k)%len(vs)]
			t0 := time.Now()
			if err := v.call(); err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			if i >= warm {
				v.d = append(v.d, time.Since(t0))
			}
			time.Sleep(v.settle)
		}
	}
	fmt.Printf("spawn cost, %d runs each after %d warm-up (namespaces: %v, Landlock ABI %d)\n", runs, warm, sup.Namespaces(), sup.LandlockABI())
	fmt.Printf("%-28s %10s %10s\n", "variant", "median", "p95")
	base := stats(vs[0].d)
	for _, v := range vs {
		s := stats(v.d)
		fmt.Printf("%-28s %10s %10s", v.name, ms(s.median), ms(s.p95))
		if v != vs[0] {
			fmt.Printf("   overhead: median %s, p95 %s", ms(s.median-base.median), ms(s.p95-base.p95))
		}
		fmt.Println()
	}
	return nil
}

func jailTrue(ctx context.Context, sup *supervisor.Supervisor, spec jail.Spec, truePath string) error {
	res, err := sup.Run(ctx, spec, jail.Invocation{Argv: []string{truePath}}, supervisor.IO{})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	return err
}

type summary struct{ median, p95 time.Duration }

func stats(d []time.Duration) summary {
	s := slices.Clone(d)
	slices.Sort(s)
	return summary{median: s[len(s)/2], p95: s[len(s)*95/100]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
