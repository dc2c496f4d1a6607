package policy

// This file holds the options each built-in Allow entry accepts. They are
// allow lists: an option that is not listed — or a word that might expand
// to one — keeps the entry from matching, and the command asks. Options
// that run a program (sort --compress-program, git grep -O, go test
// -exec), write a file the path analysis does not see, or change
// configuration are left out on purpose; each entry's NoMatch examples
// try them (TestBuiltinExamples).

import (
	"slices"
	"strings"
	"sync"
)

// optSpec is the options one program or subcommand accepts.
type optSpec struct {
	// short lists short options, getopt style: "x" a flag, "x:" one that
	// takes a value (attached or the next word), "x::" an optional
	// attached value.
	short string
	// long lists long options: "name" a flag, "name=" one that takes a
	// value (--name=v or --name v), "name=?" an optional value (only as
	// --name=v). A name ending in "*" accepts any name with that prefix.
	long []string
	// num accepts -NUM (head -20, git log -5).
	num bool
	// goStyle: Go's flag package (-name or --name, -name=v or -name v for
	// the names listed as "name="; bool flags also as -name=true).
	goStyle bool
	// stop are words after which the rest goes to another program (go
	// test -args): not checked.
	stop []string
	// posix: options end at the first operand (a wrapper's command).
	posix bool
	// harmless: no option of the program runs a program, writes a file
	// or changes configuration, so a glob or variable that could expand to
	// an option is fine (cat *.txt); for the others it is not (a file named
	// --compress-program=x in the workspace would be one).
	harmless bool
}

// spec builds an optSpec from a short string and long names.
func spec(short string, long string) optSpec {
	return optSpec{short: short, long: strings.Fields(long)}
}

func (o optSpec) with(f func(*optSpec)) optSpec {
	o.long = slices.Clone(o.long)
	f(&o)
	return o
}

// shortTakes reports whether letter is a short option and how it takes a
// value: 0 a flag, 1 a required value, 2 an optional attached value.
func (o optSpec) shortTakes(letter byte) (int, bool) {
	i := strings.IndexByte(o.short, letter)
	if i < 0 || letter == ':' {
		return 0, false
	}
	switch {
	case strings.HasPrefix(o.short[i+1:], "::"):
		return 2, true
	case strings.HasPrefix(o.short[i+1:], ":"):
		return 1, true
	}
	return 0, true
}

// longTakes looks up a long option: 0 a flag, 1 a required value, 2 an
// optional value.
func (o optSpec) longTakes(name string) (int, bool) {
	for _, l := range o.long {
		base, kind := l, 0
		switch {
		case strings.HasSuffix(l, "=?"):
			base, kind = strings.TrimSuffix(l, "=?"), 2
		case strings.HasSuffix(l, "="):
			base, kind = strings.TrimSuffix(l, "="), 1
		}
		if base == name || strings.HasSuffix(base, "*") && strings.HasPrefix(name, strings.TrimSuffix(base, "*")) {
			return kind, true
		}
	}
	return 0, false
}

// mayBeOption reports whether word i of c is only known at run time and
// could expand to something starting with "-": a variable, a
// substitution, or a glob or brace expansion at its start.
func mayBeOption(c Command, i int) bool {
	if !c.Dynamic[i] && !c.Glob[i] {
		return false
	}
	w := c.Words[i]
	return w == "" || strings.ContainsRune("$`*?[{", rune(w[0]))
}

// scan checks every option among c.Words[from:] against the spec. It
// returns the indexes of the operands (every word after "--" included)
// and, when an option is not accepted, why.
func (o optSpec) scan(c Command, from int) (ops []int, bad string) {
	for i := from; i < len(c.Words); i++ {
		w := c.Words[i]
		if slices.Contains(o.stop, w) {
			return ops, ""
		}
		if w == "--" {
			for j := i + 1; j < len(c.Words); j++ {
				ops = append(ops, j)
			}
			return ops, ""
		}
		if mayBeOption(c, i) {
			if !o.harmless {
				return ops, w + " could expand to an option"
			}
			ops = append(ops, i)
			continue
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			if o.posix {
				for j := i; j < len(c.Words); j++ {
					ops = append(ops, j)
				}
				return ops, ""
			}
			ops = append(ops, i)
			continue
		}
		next, why := o.option(c, i)
		if why != "" {
			return ops, why
		}
		i = next
	}
	return ops, ""
}

// option checks the option at word i and returns the index of its last
// word (i, or i+1 when its value is the next word).
func (o optSpec) option(c Command, i int) (int, string) {
	w := c.Words[i]
	takesNext := func(kind int, hasVal bool) int {
		if kind == 1 && !hasVal && i+1 < len(c.Words) {
			return i + 1
		}
		return i
	}
	if o.goStyle || strings.HasPrefix(w, "--") {
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		kind, ok := o.longTakes(name)
		switch {
		case !ok && o.goStyle && hasVal && (val == "true" || val == "false"):
			if k, ok := o.longTakes(name); ok && k == 0 {
				return i, ""
			}
			return i, "option " + w + " is not on the list"
		case !ok:
			return i, "option " + w + " is not on the list"
		case kind == 0 && hasVal && !(o.goStyle && (val == "true" || val == "false")):
			return i, "option " + w + " takes no value"
		}
		return takesNext(kind, hasVal), ""
	}
	if o.num && isNumber(w[1:]) {
		return i, ""
	}
	for j := 1; j < len(w); j++ {
		kind, ok := o.shortTakes(w[j])
		if !ok {
			return i, "option -" + string(w[j]) + " (in " + w + ") is not on the list"
		}
		switch kind {
		case 1:
			if j == len(w)-1 && i+1 < len(c.Words) {
				return i + 1, ""
			}
			return i, ""
		case 2:
			return i, ""
		}
	}
	return i, ""
}

// accepts reports whether every option of c from index from is on the
// spec's list.
func (o optSpec) accepts(c Command, from int) bool {
	_, bad := o.scan(c, from)
	return bad == ""
}

// readOnlySpecs are the options of the read-only file and text tools.
var readOnlySpecs = sync.OnceValue(func() map[string]optSpec {
	h := func(s optSpec) optSpec { s.harmless = true; return s }
	sums := h(spec("bctwz", "binary check tag text zero ignore-missing quiet status strict warn"))
	m := map[string]optSpec{
		"ls": h(spec("1aAbBcCdfFgGhHiklLmnNopqQrRsStuUvwxXZI:T:w:", `all almost-all author escape block-size= ignore-backups color=?
			directory dired classify=? file-type format= full-time group-directories-first no-group human-readable si
			dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink=? indicator-style= inode
			ignore= kibibytes dereference numeric-uid-gid literal hide-control-chars show-control-chars quote-name
			quoting-style= reverse recursive size sort= time= time-style= tabsize= width= context zero help version`)),
		"cat":  h(spec("AbeEnstTuv", "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting help version")),
		"head": h(spec("c:n:qvz", "bytes= lines= quiet silent verbose zero-terminated help version").with(func(o *optSpec) { o.num = true })),
		"tail": h(spec("c:fFn:qs:vz", "bytes= follow=? lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= verbose zero-terminated help version").with(func(o *optSpec) { o.num = true })),
		"wc":   h(spec("clmwL", "bytes chars lines max-line-length words files0-from= total= help version")),
		"stat": h(spec("LftZc:", "dereference file-system format= printf= terse cached= help version")),
		"file": spec("bdhiLkNnprsSvz0e:F:f:m:P:", "brief dereference no-dereference mime mime-type mime-encoding keep-going raw special-files uncompress uncompress-noreport print0 separator= files-from= magic-file= exclude= exclude-quiet= extension apple help version"),
		"du": h(spec("0abcDhHklLmsSxB:d:t:X:", `all apparent-size block-size= bytes total dereference-args dereference max-depth= human-readable
			inodes kilobytes count-links no-dereference null separate-dirs si summarize threshold= time=? time-style=
			exclude-from= exclude= one-file-system files0-from= help version`)),
		"df":      h(spec("ahHiklPTvB:t:x:", "all block-size= human-readable si inodes local output=? portability print-type type= exclude-type= total sync no-sync help version")),
		"tree":    spec("adlfxpugsDFvtrcCJXQNiAhL:P:I:", "dirsfirst noreport charset= filelimit= prune matchdirs ignore-case du si timefmt= sort= gitignore metafirst help version"),
		"nl":      h(spec("pb:d:f:h:i:l:n:s:v:w:", "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= join-blank-lines= number-format= no-renumber number-separator= starting-line-number= number-width= help version")),
		"od":      h(spec("bcdfilosvxA:j:N:S::t:w::", "address-radix= endian= skip-bytes= read-bytes= strings=? format= output-duplicates width=? traditional help version")),
		"hexdump": h(spec("bcCdovxe:f:n:s:L::", "")),
		"strings": h(spec("afwdn:t:e:T:s:", "all data bytes= radix= encoding= target= output-separator= include-all-whitespace help version").with(func(o *optSpec) { o.num = true })),
		"md5sum":  sums, "sha1sum": sums, "sha224sum": sums, "sha256sum": sums, "sha384sum": sums, "sha512sum": sums,
		"b2sum": sums.with(func(o *optSpec) { o.short += "l:"; o.long = append(o.long, "length=") }),
		"cksum": sums.with(func(o *optSpec) {
			o.short += "a:l:"
			o.long = append(o.long, "algorithm=", "length=", "base64", "raw", "untagged")
		}),
		"realpath": h(spec("eEmLPqsz", "relative-to= relative-base= canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero help version")),
		"readlink": h(spec("efmnqsvz", "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero help version")),
		"basename": h(spec("azs:", "multiple suffix= zero help version")),
		"dirname":  h(spec("z", "zero help version")),
		"diff": h(spec("abBdeEilnNpPqrsStTuvwyZC::D:F:I:L:S:U::W:x:X:", `brief report-identical-files context=? unified=? ed normal rcs side-by-side
			width= left-column suppress-common-lines show-c-function show-function-line= label= expand-tabs initial-tab
			tabsize= suppress-blank-empty paginate recursive no-dereference new-file unidirectional-new-file
			ignore-file-name-case no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file=
			ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines
			ignore-matching-lines= text strip-trailing-cr minimal horizon-lines= speed-large-files color=? palette=
			line-format= old-line-format= new-line-format= unchanged-line-format= old-group-format= new-group-format=
			changed-group-format= unchanged-group-format= help version`)),
		"cmp":      h(spec("bilsn:", "print-bytes ignore-initial= verbose bytes= quiet silent help version")),
		"comm":     h(spec("123iz", "check-order nocheck-order output-delimiter= total zero-terminated help version")),
		"cut":      h(spec("b:c:d:f:nsz", "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated help version")),
		"tr":       h(spec("cCdst", "complement delete squeeze-repeats truncate-set1 help version")),
		"column":   h(spec("tTxcsoNRHdelJnLr:", "table separator= output-separator= output-width= table-columns= table-right= table-hide= table-name= json fillrows keep-empty-lines help version")),
		"paste":    h(spec("szd:", "delimiters= serial zero-terminated help version")),
		"join":     h(spec("iz1:2:a:e:j:o:t:v:", "ignore-case check-order nocheck-order header zero-terminated help version")),
		"fold":     h(spec("bsw:", "bytes spaces width= help version")),
		"rev":      h(spec("0", "zero help version")),
		"tac":      h(spec("brs:", "before regex separator= help version")),
		"expand":   h(spec("it:", "initial tabs= help version")),
		"unexpand": h(spec("at:", "all first-only tabs= help version")),
		"fmt":      h(spec("cstuw:p:g:", "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal= help version").with(func(o *optSpec) { o.num = true })),
		"grep": h(spec("EFGPiywxvcLlmboqsrRnhHTZzUaIe:f:m:A:B:C:d:D:", `extended-regexp fixed-strings basic-regexp perl-regexp regexp= file=
			ignore-case no-ignore-case word-regexp line-regexp null-data no-messages invert-match max-count= byte-offset
			line-number no-line-number line-buffered with-filename no-filename label= only-matching quiet silent
			binary-files= text directories= devices= recursive dereference-recursive include= exclude= exclude-from=
			exclude-dir= files-without-match files-with-matches count initial-tab null before-context= after-context=
			context= color=? colour=? binary help version`).with(func(o *optSpec) { o.num = true })),
		"rg": spec("aAbBcCeEFgHhiIjLlmMNnopqrSstTuUvVwx0:A:B:C:d:E:e:f:g:j:m:M:r:t:T:", `after-context= before-context= context= binary
			block-buffered byte-offset case-sensitive color= colors= column context-separator= count count-matches crlf
			dfa-size-limit= encoding= engine= field-context-separator= field-match-separator= file= files
			files-with-matches files-without-match fixed-strings follow glob= glob-case-insensitive heading hidden iglob=
			ignore-case ignore-file-case-insensitive include-zero invert-match json line-buffered line-number
			line-regexp max-columns= max-columns-preview max-count= max-depth= max-filesize= mmap multiline
			multiline-dotall no-config no-filename no-heading no-ignore no-ignore-dot no-ignore-exclude no-ignore-files
			no-ignore-global no-ignore-parent no-ignore-vcs no-line-number no-messages no-mmap no-pcre2-unicode
			no-require-git no-unicode null null-data one-file-system only-matching passthru path-separator= pcre2
			pretty quiet regex-size-limit= regexp= replace= smart-case sort= sortr= stats text threads= trim type=
			type-add= type-clear= type-not= type-list unrestricted vimgrep with-filename word-regexp help version`),
		"jq": h(spec("acCejnrRsSMhVL:f:", `arg= argjson= slurpfile= rawfile= indent= from-file= seq stream stream-errors tab
			raw-output raw-output0 join-output ascii-output compact-output color-output monochrome-output sort-keys
			null-input raw-input slurp exit-status args jsonargs help version`)),
		"sort": spec("bcCdfghiMmnRrsuVzk:t:S:", `ignore-leading-blanks dictionary-order ignore-case general-numeric-sort
			ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort random-source= reverse sort=
			version-sort batch-size= check=? key= merge field-separator= buffer-size= stable unique zero-terminated
			parallel= debug files0-from= help version`),
		"uniq":   spec("cdDiuzf:s:w:", "count repeated all-repeated=? group=? ignore-case unique zero-terminated skip-fields= skip-chars= check-chars= help version"),
		"base64": h(spec("diw:", "decode ignore-garbage wrap= help version")),
	}
	m["egrep"], m["fgrep"] = m["grep"], m["grep"]
	return m
})

// safeEnv are the NAME=value prefixes a built-in Allow entry accepts: they
// tune a build or its output and change no program that runs. Any other
// assignment keeps the entry from matching (RUSTFLAGS, PYTEST_ADDOPTS,
// npm_config_* … can run programs).
var safeEnv = wordSet(`CGO_ENABLED GOOS GOARCH GOARM GOAMD64 GOARM64 GO386 GOWASM GOEXPERIMENT GOMAXPROCS GOGC GOMEMLIMIT
	GOTRACEBACK GO111MODULE CI NODE_ENV FORCE_COLOR NO_COLOR CLICOLOR TERM COLUMNS LINES TZ LANG LANGUAGE LC_ALL
	RUST_BACKTRACE RUST_LOG RUST_TEST_THREADS CARGO_TERM_COLOR CARGO_INCREMENTAL PYTHONUNBUFFERED
	PYTHONDONTWRITEBYTECODE PYTHONHASHSEED PYTHONIOENCODING PYTHONUTF8 PYTHONFAULTHANDLER DEBUG VERBOSE V`)

// safeAssigns reports whether every assignment before c is on safeEnv.
func safeAssigns(c Command) bool {
	for _, a := range c.Assigns {
		name, _, _ := strings.Cut(a, "=")
		if !safeEnv()[name] && !strings.HasPrefix(name, "LC_") {
			return false
		}
	}
	return true
}

// goBuildFlags are the build flags of go build, test, vet and list (the
// names ending in "=" take a value). Left out: -toolexec, -exec, -overlay,
// -compiler, -gccgoflags, -pkgdir, -installsuffix, -linkshared, and
// -gcflags/-asmflags (-ldflags is checked on its own: its -extld runs a
// program).
var goBuildFlags = []string{"a", "n", "race", "msan", "asan", "cover", "covermode=", "coverpkg=", "v", "work", "x",
	"p=", "tags=", "trimpath", "mod=", "modcacherw", "modfile=", "buildvcs=", "buildmode=", "o=", "pgo=", "json", "C="}

func goSpec(extra ...string) optSpec {
	return optSpec{goStyle: true, long: append(slices.Clone(goBuildFlags), extra...)}
}

// goSubSpecs are the options go's allowed subcommands accept.
var goSubSpecs = sync.OnceValue(func() map[string]optSpec {
	return map[string]optSpec{
		"build": goSpec("ldflags="),
		"test": goSpec("ldflags=", "c", "bench=", "benchtime=", "benchmem", "count=", "coverprofile=", "cpu=", "failfast",
			"fullpath", "fuzz=", "fuzztime=", "fuzzminimizetime=", "list=", "parallel=", "run=", "short", "shuffle=", "skip=",
			"timeout=", "vet=", "cpuprofile=", "memprofile=", "memprofilerate=", "blockprofile=", "blockprofilerate=",
			"mutexprofile=", "mutexprofilefraction=", "trace=", "outputdir=", "test.*").with(func(o *optSpec) { o.stop = []string{"-args", "--args"} }),
		"vet": goSpec("c=", "asmdecl*", "appends*", "assign*", "atomic*", "bools*", "buildtag*", "cgocall*", "composites*",
			"copylocks*", "defers*", "directive*", "errorsas*", "framepointer*", "httpresponse*", "hostport*", "ifaceassert*",
			"loopclosure*", "lostcancel*", "nilfunc*", "printf*", "shift*", "sigchanyzer*", "slog*", "stdmethods*", "stdversion*",
			"stringintconv*", "structtag*", "testinggoroutine*", "tests*", "timeformat*", "unmarshal*", "unreachable*",
			"unsafeptr*", "unusedresult*", "waitgroup*"),
		"list":    goSpec("f=", "m", "u", "e", "deps", "test", "export", "compiled", "find", "versions", "retracted", "reuse="),
		"version": {goStyle: true, long: []string{"m", "v", "json"}},
		"doc":     {goStyle: true, long: []string{"all", "c", "cmd", "short", "src", "u", "http"}},
		"help":    {goStyle: true},
		"env":     {goStyle: true, long: []string{"json", "changed"}},
		"mod":     {goStyle: true, long: []string{"m", "vendor", "go=", "x", "json"}},
	}
})

// goLdflagsOK reports whether an -ldflags value only strips symbols or
// sets strings (-s, -w, -X name=value): other linker flags can name an
// external linker to run.
func goLdflagsOK(v string) bool {
	f := strings.Fields(strings.Trim(v, `"'`))
	for i := 0; i < len(f); i++ {
		switch w := f[i]; {
		case w == "-s" || w == "-w":
		case w == "-X" && i+1 < len(f) && strings.Contains(f[i+1], "="):
			i++
		case strings.HasPrefix(w, "-X=") && strings.Contains(w[3:], "="):
		default:
			return false
		}
	}
	return true
}

// goValue returns the value of Go-style flag name among words, and whether
// it is present.
func goValue(c Command, name string) (string, bool) {
	for i := 1; i < len(c.Words); i++ {
		w := strings.TrimLeft(c.Words[i], "-")
		if !strings.HasPrefix(c.Words[i], "-") {
			continue
		}
		if n, v, ok := strings.Cut(w, "="); ok && n == name {
			return v, true
		}
		if w == name && i+1 < len(c.Words) {
			return c.Words[i+1], true
		}
	}
	return "", false
}

// cargoCommon are the options of cargo's build-like subcommands. Left
// out: --config and -Z (they set build.rustc-wrapper, a runner, a
// linker), -C, --artifact-dir/--out-dir, --open.
var cargoCommon = spec("qvrFhj:p:", `quiet verbose color= frozen locked offline package= workspace all exclude= lib bin=?
	bins example=? examples test=? tests bench=? benches all-targets features= all-features no-default-features
	release profile= jobs= keep-going target= target-dir= manifest-path= message-format= timings=? ignore-rust-version
	future-incompat-report help`)

var cargoSubSpecs = sync.OnceValue(func() map[string]optSpec {
	return map[string]optSpec{
		"build": cargoCommon, "b": cargoCommon, "check": cargoCommon, "c": cargoCommon,
		"test":   cargoCommon.with(func(o *optSpec) { o.long = append(o.long, "no-run", "no-fail-fast", "doc") }),
		"t":      cargoCommon.with(func(o *optSpec) { o.long = append(o.long, "no-run", "no-fail-fast", "doc") }),
		"bench":  cargoCommon.with(func(o *optSpec) { o.long = append(o.long, "no-run", "no-fail-fast") }),
		"doc":    cargoCommon.with(func(o *optSpec) { o.long = append(o.long, "no-deps", "document-private-items") }),
		"clippy": cargoCommon.with(func(o *optSpec) { o.long = append(o.long, "no-deps") }),
		"tree": cargoCommon.with(func(o *optSpec) {
			o.short += "de:i:f:"
			o.long = append(o.long, "edges=", "invert=", "prune=", "depth=", "prefix=", "no-dedupe", "duplicates", "charset=", "format=")
		}),
		"metadata": cargoCommon.with(func(o *optSpec) { o.long = append(o.long, "format-version=", "no-deps", "filter-platform=") }),
		"fmt":      spec("qv", "check all package= manifest-path= message-format= quiet verbose help"),
	}
})

// clippyLints are what cargo clippy accepts after --: lint levels only
// (other rustc flags, such as -C linker=, run programs).
var clippyLints = spec("D:W:A:F:", "deny= warn= allow= forbid= cap-lints=")

// rustfmtAfter are what cargo fmt accepts after --.
var rustfmtAfter = spec("qv", "check edition= color= quiet verbose")

// npmSpec are npm's own options for test, run and ls; arguments after --
// go to the project's script.
var npmSpec = spec("sqdw:", `if-present ignore-scripts silent quiet loglevel= workspace= workspaces include-workspace-root color=?
	no-color json long parseable all depth= omit= include= link package-lock-only unicode production dev`)

// nodeToolSpecs are the options of the JavaScript tools.
var nodeToolSpecs = sync.OnceValue(func() map[string]optSpec {
	return map[string]optSpec{
		"tsc": spec("p:", `noEmit project= pretty skipLibCheck strict listFiles listFilesOnly extendedDiagnostics diagnostics
		noErrorTruncation traceResolution explainFiles target= module= moduleResolution= jsx= lib= types= noImplicitAny
		strictNullChecks noUnusedLocals noUnusedParameters esModuleInterop allowJs checkJs resolveJsonModule help version`),
		"eslint": spec("", `ext= quiet max-warnings= no-eslintrc report-unused-disable-directives no-ignore ignore-pattern=
		ignore-path= color no-color debug env= global= rule= no-inline-config print-config= no-error-on-unmatched-pattern
		format= help version`),
		"prettier": spec("clu", `check list-different ignore-path= ignore-unknown no-config no-editorconfig log-level= loglevel=
		no-color with-node-modules tab-width= use-tabs semi no-semi single-quote jsx-single-quote quote-props=
		trailing-comma= no-bracket-spacing bracket-same-line arrow-parens= prose-wrap= end-of-line= print-width= parser=
		help version`),
		"jest": spec("ioeubct:w:", `ci runInBand coverage verbose silent bail=? passWithNoTests findRelatedTests listTests json
		testNamePattern= testPathPattern= testPathPatterns= selectProjects= maxWorkers= no-cache detectOpenHandles
		forceExit colors no-colors onlyChanged changedSince= lastCommit testTimeout= watch=? watchAll=? help version`),
		"vitest": spec("t:", `run no-watch watch=? coverage silent bail= passWithNoTests changed=? testNamePattern= project=
		threads=? pool= retry= typecheck help version`),
		"mocha": spec("bg:t:", "bail grep= timeout= recursive exit forbid-only forbid-pending fgrep= invert parallel jobs= help version"),
	}
})

// eslintFormats are eslint's built-in formatters (--format can name a
// JavaScript file to run).
var eslintFormats = wordSet("stylish json json-with-metadata html junit tap unix compact checkstyle visualstudio jslint-xml")

// pythonToolSpecs are the options of the Python tools. Left out:
// pytest -p (loads a plugin; -p no:NAME is checked on its own), -c,
// --override-ini, --basetemp, -W (imports the warning's module), --junitxml;
// mypy --config-file (its plugins are imported), --cache-dir,
// --install-types; pylint --load-plugins, --rcfile, --init-hook; flake8
// --output-file; ruff --config, -o.
var pythonToolSpecs = sync.OnceValue(func() map[string]optSpec {
	return map[string]optSpec{
		"pytest": spec("qvxslrk:m:n:p:", `quiet verbose exitfirst maxfail= lf last-failed ff failed-first nf new-first sw stepwise
		stepwise-skip tb= co collect-only durations= durations-min= showlocals no-header no-summary disable-warnings
		color= strict-markers strict-config deselect= ignore= ignore-glob= doctest-modules runxfail setup-show
		import-mode= rootdir= confcutdir= pyargs capture= full-trace help version`),
		"mypy": spec("p:m:", `strict ignore-missing-imports no-incremental python-version= show-error-codes pretty package= module=
		follow-imports= disallow-untyped-defs check-untyped-defs warn-unused-ignores no-error-summary show-column-numbers
		explicit-package-bases namespace-packages exclude= help version`),
		"flake8":   spec("q", "select= ignore= extend-ignore= extend-select= max-line-length= max-complexity= count statistics show-source quiet exit-zero exclude= extend-exclude= per-file-ignores= help version"),
		"pylint":   spec("jEd:e:", "disable= enable= errors-only score= reports= jobs= help version"),
		"pyflakes": spec("", "help version"),
		"ruff":     spec("qse", "select= ignore= extend-select= extend-ignore= statistics show-fixes output-format= no-cache quiet silent exit-zero exit-non-zero-on-fix diff preview no-preview target-version= line-length= check help version"),
		"black":    spec("lqvtSc", "check diff line-length= target-version= skip-string-normalization skip-magic-trailing-comma quiet verbose exclude= extend-exclude= include= color no-color preview fast safe help version"),
		"isort":    spec("lqvc", "check-only check diff profile= line-length= quiet verbose skip= skip-glob= help version"),
		"unittest": spec("vqfcbk:", "verbose quiet failfast catch buffer locals durations= help").with(func(o *optSpec) {
			o.stop = []string{"discover"} // its own -s/-p/-t name a directory and a pattern
		}),
		"pip": spec("qvlf", `quiet verbose format= local not-required user outdated uptodate files all exclude= disable-pip-version-check
		no-color isolated help version`),
	}
})

// pythonOpts are the interpreter's own options accepted before -m.
var pythonOpts = spec("BuEIsqOb", "")

// gitGlobal are the options before git's subcommand that an Allow entry
// accepts. Left out: -c, --config-env, --exec-path (they change what git
// runs), --git-dir, --work-tree, --namespace, --super-prefix, --bare,
// --attr-source, --list-cmds.
var gitGlobal = spec("PpC:", "no-pager paginate no-optional-locks literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs no-replace-objects no-lazy-fetch")

// gitDiffOpts are the diff options shared by diff, log, show and the
// like. Left out: --output (writes a file the path analysis would have to
// guess), --ext-diff and --textconv are fine (drivers come from config the
// jail keeps read-only) but -O/--open-files-in-pager (git grep) runs a
// command.
const gitDiffOpts = `patch no-patch unified= output-indicator-new= output-indicator-old= output-indicator-context= raw
	patch-with-raw indent-heuristic no-indent-heuristic minimal patience histogram anchored= diff-algorithm= stat=?
	compact-summary numstat shortstat dirstat=? cumulative dirstat-by-file=? summary patch-with-stat z name-only
	name-status submodule=? color=? no-color color-moved=? no-color-moved color-moved-ws= no-color-moved-ws word-diff=?
	word-diff-regex= color-words=? no-renames rename-empty no-rename-empty check ws-error-highlight= full-index binary
	abbrev=? break-rewrites=? find-renames=? find-copies=? find-copies-harder irreversible-delete diff-filter=
	find-object= pickaxe-all pickaxe-regex relative=? no-relative text ignore-cr-at-eol ignore-space-at-eol
	ignore-space-change ignore-all-space ignore-blank-lines ignore-matching-lines= inter-hunk-context= function-context
	exit-code quiet ext-diff no-ext-diff textconv no-textconv ignore-submodules=? src-prefix= dst-prefix= no-prefix
	default-prefix line-prefix= ita-invisible-in-index ita-visible-in-index cached staged merge-base no-index
	stat-width= stat-name-width= stat-graph-width= stat-count= skip-to= rotate-to= combined-all-paths dd`

// gitLogOpts are the revision-walking and formatting options of log,
// show, rev-list, shortlog and whatchanged.
const gitLogOpts = `follow no-decorate decorate=? decorate-refs= decorate-refs-exclude= clear-decorations source mailmap
	no-mailmap use-mailmap no-use-mailmap full-diff log-size max-count= skip= since= after= since-as-filter= until=
	before= author= committer= grep-reflog= grep= all-match invert-grep regexp-ignore-case basic-regexp
	extended-regexp fixed-strings perl-regexp remove-empty merges no-merges min-parents= max-parents= no-min-parents
	no-max-parents first-parent exclude-first-parent-only not all branches=? tags=? remotes=? glob= exclude=
	exclude-hidden= reflog alternate-refs single-worktree ignore-missing bisect stdin cherry-mark cherry-pick left-only
	right-only cherry walk-reflogs merge boundary simplify-by-decoration full-history dense sparse simplify-merges
	ancestry-path=? show-pulls topo-order date-order author-date-order reverse no-walk=? do-walk pretty=? format=
	abbrev-commit no-abbrev-commit oneline encoding= expand-tabs=? no-expand-tabs notes=? no-notes show-notes=?
	show-signature relative-date date= parents children left-right graph show-linear-break=? diff-merges= no-diff-merges
	combined-diff dense-combined remerge-diff count objects objects-edge unpacked object-names no-object-names
	timestamp header show-origin in-commit-order`

var gitLog = sync.OnceValue(func() optSpec {
	return optSpec{short: "pusGzwWaRbicgmtTn:S:G:L:M::C::B::D::U::l:X:", long: strings.Fields(gitDiffOpts + " " + gitLogOpts), num: true}
})

var gitDiff = sync.OnceValue(func() optSpec {
	return optSpec{short: "pusRzwWabB::M::C::D::U::l:X:S:G:", long: strings.Fields(gitDiffOpts)}
})

// gitSubSpecs are the options of git's read-only subcommands.
var gitSubSpecs = sync.OnceValue(func() map[string]optSpec {
	return map[string]optSpec{
		"status": spec("sbvzu::", "short branch show-stash porcelain=? long verbose untracked-files=? ignore-submodules=? ignored=? column=? no-column ahead-behind no-ahead-behind renames no-renames find-renames=? null"),
		"diff":   gitDiff(), "log": gitLog(), "show": gitLog(), "whatchanged": gitLog(), "rev-list": gitLog(), "shortlog": gitLog().with(func(o *optSpec) {
			o.short += "nsec"
			o.long = append(o.long, "numbered", "summary", "email", "group=", "committer", "format=")
		}),
		"range-diff": gitDiff().with(func(o *optSpec) {
			o.long = append(o.long, "creation-factor=", "no-dual-color", "left-only", "right-only")
		}),
		"blame": spec("bclstfnepwL:M::C::S:", `root show-stats score-debug show-name show-number porcelain line-porcelain incremental
		encoding= contents= date= progress no-progress minimal reverse first-parent abbrev=? ignore-rev= ignore-revs-file=
		color-lines color-by-age since=`),
		"grep": spec("nivwlLcEFGPhHozIaqrWpA:B:C:e:f:m:", `cached untracked no-index no-exclude-standard exclude-standard
		recurse-submodules text textconv no-textconv ignore-case word-regexp invert-match full-name extended-regexp
		basic-regexp perl-regexp fixed-strings line-number column files-with-matches name-only files-without-match null
		only-matching count color=? no-color break heading show-function function-context context= after-context=
		before-context= threads= and or not all-match quiet max-depth= max-count= recursive no-recursive`).with(func(o *optSpec) { o.num = true }),
		"rev-parse": spec("q", `show-toplevel abbrev-ref=? short=? verify quiet git-dir git-common-dir absolute-git-dir
		is-inside-work-tree is-inside-git-dir is-bare-repository is-shallow-repository symbolic symbolic-full-name
		show-prefix show-cdup show-object-format=? show-superproject-working-tree show-ref-format shared-index-path
		all branches=? tags=? remotes=? glob= exclude= disambiguate= since= after= until= before= default= revs-only
		no-revs flags no-flags sq sq-quote not prefix= local-env-vars path-format= git-path= resolve-git-dir= end-of-options`),
		"ls-files": spec("cdmoiskuzftvX:x:", `cached deleted modified others ignored stage killed unmerged exclude-standard exclude=
		exclude-from= exclude-per-directory= error-unmatch full-name recurse-submodules abbrev=? debug eol deduplicate
		format= sparse directory no-empty-directory with-tree= resolve-undo`),
		"ls-tree":       spec("drtlz", "long name-only name-status object-only full-name full-tree abbrev=? format="),
		"cat-file":      spec("tsep", "batch=? batch-check=? batch-command=? batch-all-objects textconv filters follow-symlinks buffer unordered allow-unknown-type path= use-mailmap no-use-mailmap"),
		"merge-base":    spec("a", "all octopus independent is-ancestor fork-point"),
		"name-rev":      spec("", "tags refs= exclude= all stdin annotate-stdin name-only no-undefined always"),
		"show-ref":      spec("dsq", "head heads tags branches dereference hash=? verify abbrev=? quiet exclude-existing=? exists"),
		"for-each-ref":  spec("", "count= shell perl python tcl sort= format= points-at= merged=? no-merged=? contains=? no-contains=? ignore-case omit-empty color=? exclude= include-root-refs"),
		"count-objects": spec("vH", "verbose human-readable"),
		"check-ignore":  spec("qvnz", "quiet verbose non-matching no-index"),
		"check-attr":    spec("az", "all cached source="),
		"help":          spec("agc", "all guides config no-external-commands no-aliases"),
		"version":       spec("", "build-options"),
		"show-branch":   spec("arg", "all remotes topo-order date-order current sparse more=? list merge-base independent no-name sha1-name topics reflog=? color=? no-color"),
		"cherry":        spec("v", "abbrev=?"),
		"describe":      spec("", "all tags contains abbrev= candidates= exact-match debug long match= exclude= always first-parent dirty=? broken=?"),
		"annotate":      spec("bclstfnepwL:M::C::S:", "root show-stats porcelain line-porcelain incremental encoding= contents= date= abbrev=? ignore-rev= ignore-revs-file="),
		// Listing only: the entry checks that no branch or tag is named.
		"branch":   spec("arvli", "all remotes list verbose contains=? no-contains=? merged=? no-merged=? points-at= sort= format= color=? no-color column=? no-column abbrev=? no-abbrev ignore-case show-current omit-empty"),
		"tag":      spec("lin::", "list contains=? no-contains=? merged=? no-merged=? points-at= sort= format= color=? column=? no-column ignore-case omit-empty"),
		"remote":   spec("v", "verbose push all"),
		"stash":    gitLog(), // stash list and show take log and diff options
		"reflog":   gitLog(),
		"worktree": spec("vz", "porcelain verbose expire="),
		"config":   spec("lz", "list get get-all get-regexp get-urlmatch get-color get-colorbool global system local worktree file= blob= show-origin show-scope null name-only includes no-includes type= default= bool int bool-or-int path expiry-date url= all regexp value= fixed-value"),
	}
})

// makeOpts are the options of make that an Allow entry accepts. Left out:
// --eval (runs what it says), -f/--file/--makefile (another makefile),
// -I/--include-dir, -E, --jobserver-auth, and variable assignments that
// set the shell or make's own flags (SHELL=./x runs x for every recipe).
var makeOpts = spec("BdeiknqrRsStwj::l::O::C:o:W:", `always-make debug=? environment-overrides ignore-errors keep-going just-print
	dry-run recon question no-builtin-rules no-builtin-variables silent quiet no-silent stop touch trace print-directory
	no-print-directory jobs=? load-average=? max-load=? output-sync=? directory= old-file= assume-old= new-file=
	assume-new= what-if= warn-undefined-variables check-symlink-times`)

// makeAssignOK reports whether a make variable assignment only sets a
// plain value: not SHELL and the like, and no path, substitution, quote
// or program name in the value.
func makeAssignOK(w string) bool {
	name, val, _ := strings.Cut(w, "=")
	name = strings.TrimRight(name, ":+?!")
	if names("SHELL MAKESHELL .SHELLFLAGS MAKEFLAGS MFLAGS MAKEFILES MAKEFILE_LIST .RECIPEPREFIX MAKE MAKECMDGOALS")[name] {
		return false
	}
	for _, r := range val {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.,:=+-", r)) {
			return false
		}
	}
	base := strings.TrimRight(val, "0123456789.")
	return !interpreters()[val] && !interpreters()[base] && !noPrefix()[val] && !pythonName().MatchString(val)
}

// wrapperSpecs are the options of the wrappers an Allow entry accepts.
// Left out: time -o/-a (write a file), flock (creates its lock file),
// bash -i/-l/--rcfile/--init-file/--login (run startup files), env -S
// with a split string is analysed, sudo and friends are denied.
var wrapperSpecs = sync.OnceValue(func() map[string]optSpec {
	m := map[string]optSpec{
		"env":     spec("i0vu:C:S:", "ignore-environment null unset= chdir= split-string= debug"),
		"timeout": spec("vs:k:", "signal= kill-after= foreground preserve-status verbose"),
		"nice":    spec("n:", "adjustment=").with(func(o *optSpec) { o.num = true }),
		"nohup":   {},
		"time":    spec("pvqf:", "portability verbose quiet format="),
		"xargs":   spec("0prtxa:d:E:e::I:i::L:l::n:P:s:", "null arg-file= delimiter= eof=? replace=? max-lines=? max-args= max-procs= max-chars= interactive verbose exit no-run-if-empty show-limits open-tty process-slot-var="),
		"stdbuf":  spec("i:o:e:", "input= output= error="),
		"ionice":  spec("tc:n:", "class= classdata= ignore"),
		"setsid":  spec("cfw", "ctty fork wait"),
		"command": {},
		"builtin": {},
		"exec":    spec("cla:", ""),
		"watch":   spec("bcdegtxn:", "beep color differences=? errexit exec interval= no-title chgexit precise"),
		"busybox": {},
		"trap":    {},
	}
	for k, v := range m {
		v.posix = true
		m[k] = v
	}
	return m
})

// shellOptsOK reports whether a shell's options before its script are
// harmless: -c and set-style flags, -o NAME, -O/+O shopt names. -i and -l
// would run startup files, --rcfile and --init-file name one.
func shellOptsOK(c Command) bool {
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		if c.Dynamic[i] && strings.HasPrefix(w, "-") {
			return false
		}
		switch {
		case w == "--" || w == "-":
			return true
		case strings.HasPrefix(w, "--"):
			if !names("--norc --noprofile --posix --noediting --restricted")[w] {
				return false
			}
		case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+"):
			for j := 1; j < len(w); j++ {
				switch w[j] {
				case 'o', 'O':
					i++ // the option's name follows
					j = len(w)
				case 'i', 'l', 's':
					return false
				default:
					if !strings.ContainsRune("cefnuvxhBCEHPTab", rune(w[j])) {
						return false
					}
				}
			}
		default:
			return true // the script string (or file)
		}
	}
	return true
}

// uvRunOpts are the options of uv run (and the like) an Allow entry
// accepts. Left out: --with (installs), --env-file (sets any variable),
// --python (names an interpreter), --index, --from.
var uvRunOpts = spec("", "frozen locked no-sync offline no-dev all-extras extra= group= only-group= no-group= package= no-project isolated directory= project= quiet verbose")

// execOptions are options that make a program run a program (or load
// code) of the caller's choosing. A command that uses one is asked about
// whatever rule allows it: Bash(sort:*) does not cover sort
// --compress-program=./x. The keys are a program, or a program and its
// subcommand. The built-in Allow entries do not rely on this list (they
// accept only the options they list); it is what a prefix rule of the
// user's cannot cover. Long options are matched by any abbreviation, as
// getopt_long, git and npm accept them.
var execOptions = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"sort":           {"--compress-program"},
		"rg":             {"--pre", "--hostname-bin"},
		"git grep":       {"-O", "--open-files-in-pager"},
		"git fetch":      {"--upload-pack"},
		"git pull":       {"--upload-pack"},
		"git clone":      {"--upload-pack", "-u"},
		"git ls-remote":  {"--upload-pack", "--exec"},
		"git fetch-pack": {"--upload-pack", "--exec"},
		"git archive":    {"--exec"},
		"git send-pack":  {"--receive-pack", "--exec"},
		"git push":       {"--receive-pack", "--exec"},
		"git rebase":     {"--exec", "-x"},
		"git bisect":     {"run"},
		"git difftool":   {"--extcmd", "-x"},
		"git mergetool":  {"--tool", "-t"},
		"git submodule":  {"foreach"},
		"make":           {"--eval", "-E", "SHELL=", "MAKESHELL=", ".SHELLFLAGS=", "MAKEFLAGS="},
		"go":             {"-exec", "-toolexec", "-vettool", "-overlay"},
		"cargo":          {"--config", "-Z"},
		"npm":            {"--script-shell", "--node-options", "--userconfig", "--globalconfig"},
		"pnpm":           {"--script-shell", "--node-options"},
		"yarn":           {"--script-shell"},
		"pytest":         {"-p", "--override-ini", "-o"},
		"py.test":        {"-p", "--override-ini", "-o"},
		"tar":            {"--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script", "--new-volume-script", "-F", "--rsh-command", "--rmt-command"},
		"rsync":          {"-e", "--rsh", "--rsync-path"},
		"zip":            {"-TT", "--unzip-command"},
		"mypy":           {"--config-file"},
		"pylint":         {"--load-plugins", "--init-hook", "--rcfile"},
		"eslint":         {"--rulesdir", "--plugin", "--resolve-plugins-relative-to", "--parser"},
		"prettier":       {"--plugin"},
		"jest":           {"--testResultsProcessor", "--globalSetup", "--globalTeardown", "--setupFiles", "--testRunner", "--transform", "--reporters"},
		"bash":           {"--rcfile", "--init-file"},
		"ssh":            {"-o"},
	}
})

// execOptionPrefix starts every execOptionRisk reason.
const execOptionPrefix = "the option "

// execOptionRisk is why c must be asked about whatever rule allows it:
// one of its options (or, for make, an assignment) runs a program of the
// caller's choosing. "" when none does.
func execOptionRisk(c Command) string {
	if len(c.Words) == 0 || c.Dynamic[0] {
		return ""
	}
	name := baseName(c.Words[0])
	keys := []string{name}
	if len(c.Words) > 1 {
		if name == "git" {
			if i := gitSub(c); i > 0 {
				keys = append(keys, "git "+c.Words[i])
			}
		} else {
			keys = append(keys, name+" "+c.Words[1])
		}
	}
	for _, k := range keys {
		for _, opt := range execOptions()[k] {
			for i, w := range c.Words[1:] {
				if !optionIs(w, opt) {
					continue
				}
				if opt == "-p" && (strings.HasPrefix(w, "-pno:") || w == "-p" && i+2 < len(c.Words) && strings.HasPrefix(c.Words[i+2], "no:")) {
					continue // pytest -p no:NAME only disables a plugin
				}
				return execOptionPrefix + w + " runs a program (or loads code) of the caller's choosing"
			}
		}
	}
	return ""
}

// optionIs reports whether the word w is the option opt: exactly, with an
// attached value (--opt=v, -Ov), as an abbreviation of a long option
// (--compress-prog), or (for an assignment opt NAME=) setting NAME.
func optionIs(w, opt string) bool {
	switch {
	case w == opt:
		return true
	case strings.HasSuffix(opt, "="):
		return strings.HasPrefix(w, opt) || strings.HasPrefix(w, strings.TrimSuffix(opt, "=")+"+=") || strings.HasPrefix(w, strings.TrimSuffix(opt, "=")+":=")
	case strings.HasPrefix(opt, "--"):
		name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		return strings.HasPrefix(w, "--") && name != "" && strings.HasPrefix(opt[2:], name) && len(name) >= 2
	case len(opt) == 2 && opt[0] == '-':
		// -O, -Ox, or O inside a group of short flags (-nO…).
		if strings.HasPrefix(w, opt) {
			return true
		}
		return strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && len(w) > 2 && strings.IndexByte(w[1:], opt[1]) >= 0 && isLetters(w[1:strings.IndexByte(w[1:], opt[1])+1])
	case strings.HasPrefix(opt, "-"):
		// A Go-style or single-dash long option: -exec, -exec=x, --exec.
		return w == "-"+opt || strings.HasPrefix(w, opt+"=") || strings.HasPrefix(w, "-"+opt+"=")
	}
	return w == opt // a word such as git bisect run
}

func isLetters(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
