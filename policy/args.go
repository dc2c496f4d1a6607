package policy

// This file finds the words of a simple command that may name files, and
// whether the command writes them. It errs towards listing too much: a
// word that is not a file resolves to a harmless name in the working
// directory, while a missed write would go unexplained.

import (
	"slices"
	"strings"
	"sync"
)

// argMode is how a tool's operands relate to files.
type argMode int

const (
	opRead      argMode = iota // every operand may be a file it reads
	opWrite                    // every operand is a file it writes (rm, touch …)
	opLastWrite                // the last operand is written (cp, ln …)
	opModeFirst                // a mode or owner, then written files (chmod …)
	opPattern                  // a pattern or program, then read files (grep, sed …)
	opNone                     // operands are not files (echo, npm …)
	opSecondOut                // input, then an optional output file (uniq, xxd)
)

// toolSpec is what args knows about one tool.
type toolSpec struct {
	mode argMode
	// values are short options taking a value; writes and reads those
	// whose value is a written or read file. Long options are in the
	// same strings as "--name".
	values, writes, reads []string
}

func flags(s string) []string { return strings.Fields(s) }

// tools is built at its first use (wordSet says why), sized for the
// names it gets (115) so that it never grows.
var tools = sync.OnceValue(func() map[string]toolSpec {
	m := make(map[string]toolSpec, 128)
	set := func(names string, spec toolSpec) {
		for _, n := range strings.Fields(names) {
			m[n] = spec
		}
	}
	set("rm rmdir unlink shred touch mkdir truncate mkfifo mknod", toolSpec{mode: opWrite, values: flags("-s -r -m --size --reference")})
	set("mv", toolSpec{mode: opWrite, values: flags("-t -S --target-directory --suffix"), writes: flags("-t --target-directory")})
	set("tee", toolSpec{mode: opWrite})
	set("cp install ln rsync scp", toolSpec{mode: opLastWrite, values: flags("-t -S -m -o -g -e --target-directory --suffix --mode --owner --group"), writes: flags("-t --target-directory")})
	set("chmod chown chgrp", toolSpec{mode: opModeFirst, values: flags("--reference"), reads: flags("--reference")})
	set("grep egrep fgrep rg ag ack", toolSpec{mode: opPattern, values: flags("-e -f -m -A -B -C -g -t -T -d -D --regexp --file --max-count --glob --type --type-not --context --after-context --before-context --exclude --include --exclude-dir --color --colour --label --pre"), reads: flags("-f --file")})
	set("sed", toolSpec{mode: opPattern, values: flags("-e -f -l --expression --file --line-length"), reads: flags("-f --file")})
	set("awk gawk mawk nawk", toolSpec{mode: opPattern, values: flags("-f -v -F -i --file --assign --field-separator --include"), reads: flags("-f --file")})
	// perl's operands are files once a script is given with -e; -i edits
	// them in place (perlInPlace).
	set("perl", toolSpec{mode: opPattern, values: flags("-e -E -I -M -m -x")})
	// ed and ex write the file they edit (a w on their standard input or
	// -c); sponge writes the file it names.
	set("ed red ex", toolSpec{mode: opWrite, values: flags("-p -c")})
	set("sponge", toolSpec{mode: opWrite})
	set("jq yq", toolSpec{mode: opPattern, values: flags("--arg --argjson --slurpfile --rawfile --indent -f --from-file"), reads: flags("-f --from-file")})
	set("sort", toolSpec{values: flags("-o -k -t -S -T --output --key --field-separator --buffer-size --temporary-directory"), writes: flags("-o --output")})
	set("uniq xxd", toolSpec{mode: opSecondOut, values: flags("-f -s -w -c -l -s -g -o")})
	set("head tail", toolSpec{values: flags("-n -c --lines --bytes")})
	set("cut", toolSpec{values: flags("-d -f -c -b --delimiter --fields --characters --bytes")})
	set("tr echo printf test [ true false : export declare local readonly typeset unset set shift exit return sleep seq expr yes printenv type which kill wait read cd pushd popd dirs date whoami id uname hostname nproc",
		toolSpec{mode: opNone})
	set("npm npx yarn pnpm pip pip3 pipx uv cargo rustup rustc docker podman kubectl gh apt apt-get brew gem bundle systemctl service make",
		toolSpec{mode: opNone, values: flags("-C -f -o --prefix --manifest-path --target-dir --file --directory --makefile"),
			reads: flags("-C -f --prefix --manifest-path --file --directory --makefile"), writes: flags("-o --target-dir")})
	set("go", toolSpec{values: flags("-o -C -coverprofile -cpuprofile -memprofile -blockprofile -mutexprofile -trace -outputdir -modfile -p -run -bench -count -timeout -tags -ldflags -gcflags"),
		writes: flags("-o -coverprofile -cpuprofile -memprofile -blockprofile -mutexprofile -trace -outputdir"), reads: flags("-C -modfile")})
	set("gcc cc clang g++ c++ ld", toolSpec{values: flags("-o -I -L -include -MF -x"), writes: flags("-o -MF"), reads: flags("-I -L -include")})
	set("curl", toolSpec{mode: opNone, values: flags("-o -T -K -d -H -X -u -A -e -b -c -F -w --output --upload-file --config --data --header --request --user --cookie --cookie-jar --form"),
		writes: flags("-o --output -c --cookie-jar"), reads: flags("-T --upload-file -K --config")})
	set("wget", toolSpec{mode: opNone, values: flags("-O -P -o -a -i --output-document --directory-prefix --output-file --append-output --input-file"),
		writes: flags("-O -P -o -a --output-document --directory-prefix --output-file --append-output"), reads: flags("-i --input-file")})
	// patch -d DIR works in DIR: the files it patches are there.
	set("patch", toolSpec{values: flags("-p -o -i -d -r --output --input --directory"), writes: flags("-o --output -r -d --directory"), reads: flags("-i --input")})
	set("unzip", toolSpec{values: flags("-d -x"), writes: flags("-d")})
	set("tar", toolSpec{values: flags("-f -C -T -X --file --directory --files-from --exclude-from")})
	set("git", toolSpec{values: flags("-m -F -C -c -b -B -n --message --file --author --date --format --pretty -o --output"), writes: flags("-o --output"), reads: flags("-F --file")})
	set("dd", toolSpec{mode: opNone})
	// The interpreter's -m names a module, not a file (a script, or the
	// module's own operands, are read). -c's code stays an operand: code
	// brig cannot see ("$CODE") is a dynamic word, which asks.
	set("python python3", toolSpec{values: flags("-m -W -X --check-hash-based-pycs")})
	return m
})

// devices are redirection targets that are not files.
func isDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/random", "/dev/urandom", "-":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// pathy reports whether an option value looks like a file name.
func pathy(s string) bool {
	return strings.ContainsRune(s, '/') || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~")
}

// argPaths lists the words of c that may name files.
func argPaths(c Command) []PathArg {
	var out []PathArg
	add := func(text string, write, dynamic bool) {
		if text == "" || isDevice(text) {
			return
		}
		for i := range out {
			if out[i].Text == text {
				out[i].Write = out[i].Write || write
				out[i].Dynamic = out[i].Dynamic || dynamic
				return
			}
		}
		out = append(out, PathArg{Text: text, Write: write, Dynamic: dynamic})
	}
	for _, r := range c.Redirects {
		add(r.Target, r.Write, r.Dynamic)
	}
	if len(c.Words) == 0 || c.Dynamic[0] {
		return out
	}
	name := baseName(c.Words[0])
	switch {
	case name == "find":
		findPaths(c, add)
		return out
	case name == "dd":
		for i, w := range c.Words[1:] {
			if v, ok := strings.CutPrefix(w, "if="); ok {
				add(v, false, c.Dynamic[i+1])
			}
			if v, ok := strings.CutPrefix(w, "of="); ok {
				add(v, true, c.Dynamic[i+1])
			}
		}
		return out
	case c.Wrapper:
		return out // the wrapped command reports its own
	}
	spec := tools()[name]
	var ops []int // indexes of operands
	patternGiven := false
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		if w == "--" {
			for j := i + 1; j < len(c.Words); j++ {
				ops = append(ops, j)
			}
			break
		}
		if !strings.HasPrefix(w, "-") || w == "-" || c.Dynamic[i] && !strings.HasPrefix(w, "-") {
			ops = append(ops, i)
			continue
		}
		opt, val, hasVal := strings.Cut(w, "=")
		if !strings.HasPrefix(w, "--") && len(w) > 2 && slices.Contains(spec.values, w[:2]) {
			opt, val, hasVal = w[:2], w[2:], true // -oFILE
		}
		takes := slices.Contains(spec.values, opt)
		if takes && !hasVal && i+1 < len(c.Words) {
			i++
			val, hasVal = c.Words[i], true
		}
		if slices.Contains([]string{"-e", "--regexp", "-f", "--file", "--expression", "--from-file"}, opt) {
			patternGiven = true
		}
		if (name == "jq" || name == "yq") && (opt == "--rawfile" || opt == "--slurpfile") && hasVal && i+1 < len(c.Words) {
			// --rawfile NAME FILE: the value was the name; the file
			// follows (red team, 2026-12-03: the filter was taken for it).
			i++
			add(c.Words[i], false, c.Dynamic[i])
			continue
		}
		if name == "perl" && perlInPlace(w) {
			spec.mode = opWrite // perl -pi -e …: the files are rewritten
		}
		if (name == "awk" || name == "gawk") && (opt == "-i" || opt == "--include") && strings.TrimSuffix(val, ".awk") == "inplace" {
			spec.mode = opWrite // gawk -i inplace: the files after the program are rewritten
		}
		if !hasVal {
			if name == "sed" && (opt == "-i" || strings.HasPrefix(opt, "-i") || opt == "--in-place") {
				spec.mode = opWrite // the files after the script are rewritten
			}
			continue
		}
		switch {
		case slices.Contains(spec.writes, opt):
			add(val, true, c.Dynamic[i])
		case slices.Contains(spec.reads, opt):
			add(val, false, c.Dynamic[i])
		case !takes && pathy(val):
			add(val, false, c.Dynamic[i])
		}
	}
	if name == "tar" {
		tarPaths(c, add)
		return out
	}
	mode := spec.mode
	if subcommandTools()[name] && len(ops) > 0 {
		ops = ops[1:] // git log, go test: the subcommand is not a file
	}
	if mode == opPattern && !patternGiven && len(ops) > 0 {
		ops = ops[1:]
	}
	if (name == "sed" || name == "perl" || name == "awk" || name == "gawk") && mode == opWrite && !patternGiven && len(ops) > 0 {
		ops = ops[1:] // the script, given as the first operand
	}
	for n, i := range ops {
		w, dyn := c.Words[i], c.Dynamic[i]
		switch mode {
		case opNone:
		case opWrite:
			add(w, true, dyn)
		case opLastWrite:
			add(w, n == len(ops)-1 && len(ops) > 1, dyn)
		case opModeFirst:
			if n > 0 {
				add(w, true, dyn)
			}
		case opSecondOut:
			add(w, n == 1, dyn)
		default:
			add(w, false, dyn)
		}
	}
	if name == "patch" || name == "unzip" {
		add(".", true, false) // writes files in the working directory
	}
	if name == "git" {
		// git bundle create FILE writes FILE.
		for i := 1; i+2 < len(c.Words); i++ {
			if c.Words[i] == "bundle" && c.Words[i+1] == "create" {
				for j := i + 2; j < len(c.Words); j++ {
					if !strings.HasPrefix(c.Words[j], "-") {
						add(c.Words[j], true, c.Dynamic[j])
						break
					}
				}
				break
			}
		}
	}
	return out
}

// perlInPlace reports whether w is a cluster of perl's switches that
// holds -i (edit in place) before a switch that takes the rest of the
// word as its value: -i, -pi, -i.bak, -lpi; not -ne or -Mstrict.
func perlInPlace(w string) bool {
	if !strings.HasPrefix(w, "-") || strings.HasPrefix(w, "--") {
		return false
	}
	for _, r := range w[1:] {
		switch {
		case r == 'i':
			return true
		case strings.ContainsRune("eEIMmxl0dDC", r):
			return false // its value follows
		}
	}
	return false
}

// findPaths: find's start points are read (written with -delete); the
// expression's file arguments are read, -fprint and -fls files written.
func findPaths(c Command, add func(string, bool, bool)) {
	var starts []int
	i := 1
	for ; i < len(c.Words); i++ {
		w := c.Words[i]
		if strings.HasPrefix(w, "-") || w == "(" || w == "!" {
			break
		}
		starts = append(starts, i)
	}
	del := slices.Contains(c.Words, "-delete")
	// A command run on what it finds may write it: in a git directory
	// (find .git/logs -exec cp /dev/null {} ;) that counts as a write
	// there; elsewhere the command's own words say what it does.
	execs := slices.ContainsFunc(c.Words, func(w string) bool {
		return w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir"
	})
	for ; i < len(c.Words); i++ {
		switch c.Words[i] {
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(c.Words) {
				add(c.Words[i+1], true, c.Dynamic[i+1])
			}
		case "-newer", "-anewer", "-cnewer", "-samefile":
			if i+1 < len(c.Words) {
				add(c.Words[i+1], false, c.Dynamic[i+1])
			}
		}
	}
	if len(starts) == 0 {
		add(".", del, false)
	}
	for _, s := range starts {
		add(c.Words[s], del || execs && mayNameGit(c.Words[s], false), c.Dynamic[s])
	}
}

// tarValueLetters are GNU tar's short options that take a value.
const tarValueLetters = "bCfFgHIKLNTVX"

// tarPaths: the archive is written when creating, and extraction writes
// into -C DIR or the working directory.
func tarPaths(c Command, add func(string, bool, bool)) {
	create, extract := false, false
	archive := ""
	var dirs []string // every -C: each is written into by the members after it
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		switch {
		case w == "--create" || w == "--append" || w == "--update":
			create = true
		case w == "--extract" || w == "--get":
			extract = true
		case strings.HasPrefix(w, "--file="):
			archive = strings.TrimPrefix(w, "--file=")
		case strings.HasPrefix(w, "--directory="):
			dirs = append(dirs, strings.TrimPrefix(w, "--directory="))
		case (w == "--file" || w == "--directory") && i+1 < len(c.Words):
			if w == "--file" {
				archive = c.Words[i+1]
			} else {
				dirs = append(dirs, c.Words[i+1])
			}
			i++
		case !strings.HasPrefix(w, "--") && (i == 1 || strings.HasPrefix(w, "-")):
			// A cluster of short options (-xzf, or the old style's first
			// word without a dash): an option that takes a value takes the
			// rest of a dashed cluster (-C.git), or else the next word, in
			// the order the letters come (-xCf .git a.tar).
			dashed := strings.HasPrefix(w, "-")
			letters := strings.TrimPrefix(w, "-")
			for j := 0; j < len(letters); j++ {
				l := letters[j]
				create = create || strings.IndexByte("cruA", l) >= 0
				extract = extract || l == 'x'
				if strings.IndexByte(tarValueLetters, l) < 0 {
					continue
				}
				var value string
				switch {
				case dashed && j+1 < len(letters):
					value, j = letters[j+1:], len(letters)
				case i+1 < len(c.Words):
					i++
					value = c.Words[i]
				}
				switch l {
				case 'f':
					archive = value
				case 'C':
					dirs = append(dirs, value)
				}
			}
		}
	}
	if archive != "" {
		add(archive, create, false)
	}
	if extract {
		if len(dirs) == 0 {
			dirs = []string{"."}
		}
		for _, d := range dirs {
			add(d, true, false)
		}
	}
}

// runTimeArg stands for an argument xargs adds at run time.
const runTimeArg = "\x00run-time argument"

// writesRunTimeArgs reports whether c, run by find's -exec (or -execdir,
// -ok) or by xargs, writes the paths those give it: find's {} among the
// paths it writes, or an argument xargs would add at the end.
func writesRunTimeArgs(c Command) bool {
	if len(c.Via) == 0 {
		return false
	}
	switch via := c.Via[len(c.Via)-1]; {
	case strings.HasPrefix(via, "find -"):
		return slices.ContainsFunc(c.Paths, func(p PathArg) bool { return p.Write && strings.Contains(p.Text, "{}") })
	case via == "xargs":
		more := c
		more.Words = append(slices.Clone(c.Words), runTimeArg)
		more.Dynamic = append(slices.Clone(c.Dynamic), false)
		more.Glob = append(slices.Clone(c.Glob), false)
		more.Redirects = nil
		return slices.ContainsFunc(argPaths(more), func(p PathArg) bool { return p.Write && p.Text == runTimeArg })
	}
	return false
}

// knownFiles reports whether brig knows which of c's files it writes: a
// tool of the table above, a reader known to write nothing, a builtin,
// git (decided on its own) or find (its start points).
func knownFiles(c Command) bool {
	if len(c.Words) == 0 || c.Dynamic[0] {
		return true // nothing to go by: decided as a hidden command
	}
	name := baseName(c.Words[0])
	_, listed := tools()[name]
	return listed || readOnlyTools()[name] || infoCommands()[name] || name == "find" || name == "git" || c.Wrapper
}

// scriptTools take a program in their words whose text may name the files
// it writes.
var scriptTools = wordSet("sed gsed awk gawk mawk nawk perl")

// scriptNamesGit reports whether a word of a sed, awk or perl command
// that is not one of its file operands names a path in a git directory
// (sed -n 'w .git/index', awk '{print > ".git/x"}'): the script writes it.
func scriptNamesGit(c Command, namesGit func(string) bool) bool {
	if len(c.Words) == 0 || !scriptTools()[baseName(c.Words[0])] {
		return false
	}
	files := map[string]bool{}
	for _, p := range c.Paths {
		files[p.Text] = true
	}
	for _, w := range c.Words[1:] {
		if files[w] || !strings.Contains(w, "git") {
			continue
		}
		for _, tok := range strings.FieldsFunc(w, func(r rune) bool { return strings.ContainsRune(" \t\n;{}()<>\"'`,|&=", r) }) {
			if namesGit(tok) {
				return true
			}
		}
	}
	return false
}
