package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestHiddenEvaluationsAsk: bash expands text the analysis sees as quoted
// and inert when it names a variable with a subscript (printf -v, read,
// declare, local, unset, wait -p, test -v, [[ -v ]]), reaches a name
// through a variable (${!x}, declare -n), expands a value as a prompt
// (${x@P}), or reads a declare value as an array assignment. Each line is
// run by the real bash first, to prove that the command hidden in it runs
// (it creates MARK); then it must not be allowed, even beside an allowed
// command that keeps the write grant. The controls are the same builtins
// used plainly: bash creates nothing, and they stay allowed.
func TestHiddenEvaluationsAsk(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to prove the lines run what they hide")
	}
	ask, err := New(t.TempDir(), Loaded{}, ModeAsk, Machine{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	runs := func(line string) bool {
		t.Helper()
		dir := t.TempDir()
		cmd := exec.Command(bash, "-c", line)
		cmd.Dir = dir
		_ = cmd.Run() // some lines fail after the hidden command ran
		_, err := os.Stat(filepath.Join(dir, "MARK"))
		return err == nil
	}
	for _, line := range []string{
		`printf -v 'a[$(touch MARK)]' x`,
		`read 'a[$(touch MARK)]' <<< x`,
		`declare 'a[$(touch MARK)]=1'`,
		`f() { local 'a[$(touch MARK)]=1'; }; f`,
		`declare -a x='([$(touch MARK)]=1)'`,
		`typeset -a x='($(touch MARK))'`,
		`y='([$(touch MARK)]=1)'; declare -a x="$y"`,
		`a=(); unset 'a[$(touch MARK)]'`,
		`a=(); x='a[$(touch MARK)]'; unset "$x"`,
		`test -v 'a[$(touch MARK)]'`,
		`[ -v 'a[$(touch MARK)]' ]`,
		`[[ -v 'a[$(touch MARK)]' ]]`,
		`x='a[$(touch MARK)]'; [[ -v $x ]]`,
		`x='$(touch MARK)'; echo "${x@P}"`,
		`x='a[$(touch MARK)]'; echo ${!x}`,
		`x=('a[$(touch MARK)]'); echo ${!x[0]}`,
		`sleep 0 & wait -p 'a[$(touch MARK)]' -n`,
		`x='a[$(touch MARK)]'; declare -n r=$x; echo $r`,
		`printf -v'a[$(touch MARK)]' x`,
		`printf '-va[$(touch MARK)]' x`,
		`sleep 0 & wait -n -pa'[$(touch MARK)]'`,
		`read -p'> ' 'a[$(touch MARK)]' <<< x`,
		`x='a[$(touch MARK)]'; : {a[x]}>/dev/null`,
	} {
		if !runs(line) {
			t.Errorf("%s: bash ran nothing hidden; the case proves nothing", line)
			continue
		}
		for _, l := range []string{line, line + "; go version"} {
			if d := DecideBash(RuleSet{}, l); d.Tier == Allow {
				t.Errorf("%s: allowed\n%s", l, summary(d))
			}
			if v := ask.Decide(bashCall(l)); v.Tier == Allow {
				t.Errorf("%s: allowed in ask mode (%s)", l, v.Reason)
			}
		}
	}
	for _, line := range []string{
		`printf -v x '%s' y; echo "$x"`,
		`read -r x <<< y; echo "$x"`,
		`declare -a x=(1 2); echo "${x[1]}"`,
		`declare a[0]=1; echo "${a[0]}"`,
		`f() { local x=1; echo "$x"; }`,
		`a=(1 2); echo "${a[@]}" "${#a[*]}"`,
		`x=1; unset x; echo "${x:-none}"`,
		`test -v HOME && echo set`,
		`[[ -v HOME ]] && echo set`,
		`a=(1 2); echo "${!a[@]}"`,
		`echo "${!BASH*}" > /dev/null`,
		`x='$(touch MARK)'; echo "${x@Q}"`,
		`sleep 0 & wait -n`,
		`read -p'> ' x <<< y; echo "$x"`,
		`printf -vx '%s' y; echo "$x"`,
		`: {fd}>/dev/null`,
	} {
		if runs(line) {
			t.Errorf("control %s: bash created MARK", line)
		}
		if d := DecideBash(RuleSet{}, line); d.Tier != Allow {
			t.Errorf("control %s: %s\n%s", line, d.Tier, summary(d))
		}
	}
}
