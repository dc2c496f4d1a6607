package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"brig/internal/jailexe"

	seccomp "github.com/seccomp/libseccomp-golang"
	"github.com/spf13/cobra"
)

// Set by `make release` with -ldflags -X; a plain `go build` leaves them
// empty and the build info the Go toolchain embeds fills what it can.
var (
	version   string // git describe of the release
	commit    string // the full commit id
	buildDate string // RFC 3339, UTC
)

// buildInfo is what `brig version` reports.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	CommitDate string `json:"commit_date,omitempty"`
	Modified   bool   `json:"modified"` // built from a tree with uncommitted changes
	BuildDate  string `json:"build_date,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
	Libseccomp string `json:"libseccomp"`
	// Linkage is "static" (no dynamic loader, no shared library: runs on
	// any Linux without a package installed), "dynamic" (needs the listed
	// shared libraries at run time) or "unknown" (the executable could not
	// be read).
	Linkage string   `json:"linkage"`
	Needs   []string `json:"needs,omitempty"` // shared libraries, when dynamic
	// JailC is the C library of the jail's carried programs (init and the
	// workers): "musl", "system", or "" when brig carries none.
	JailC string `json:"jail_c_library,omitempty"`
}

// addReleaseCommands registers what a release and its installation use:
// `brig version` and the root's --version flag, which print the same report
// (it reads the executable, so it is built only when asked for, never at
// start-up), and the hidden `brig man` that writes the man page.
func addReleaseCommands(root *cobra.Command) {
	root.Version = shortVersion()
	cobra.AddTemplateFunc("brigBuildInfo", func() string {
		var b strings.Builder
		readBuildInfo("/proc/self/exe").writeText(&b)
		return b.String()
	})
	root.SetVersionTemplate(`{{brigBuildInfo}}`)
	root.AddCommand(newVersionCmd())
	root.AddCommand(newManCmd())
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print brig's version, commit, build date, Go version, how libseccomp is linked and what the jail's programs are linked with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi := readBuildInfo("/proc/self/exe")
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(bi)
			}
			return bi.writeText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// shortVersion is the release's version, or "devel" for a build from source.
func shortVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// readBuildInfo gathers the report; exe is the executable to inspect for
// its linkage (the running one in brig, a built file in tests).
func readBuildInfo(exe string) buildInfo {
	major, minor, micro := seccomp.GetLibraryVersion()
	bi := buildInfo{
		Version:    shortVersion(),
		Commit:     commit,
		BuildDate:  buildDate,
		Go:         runtime.Version(),
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
		Libseccomp: fmt.Sprintf("%d.%d.%d", major, minor, micro),
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if bi.Commit == "" {
					bi.Commit = s.Value
				}
			case "vcs.time":
				bi.CommitDate = s.Value
			case "vcs.modified":
				bi.Modified = s.Value == "true"
			}
		}
	}
	bi.Linkage, bi.Needs = linkage(exe)
	bi.JailC = jailexe.CarriedC
	return bi
}

// jailLinkage says in words what the jail's carried programs are linked
// with.
func (bi buildInfo) jailLinkage() string {
	switch bi.JailC {
	case "musl":
		return "init and the workers carried inside brig, linked with musl"
	case "":
		return "no carried programs (not built with internal/build/build.sh): calls re-execute brig itself"
	}
	return "init and the workers carried inside brig, linked with the system's C library (with musl-gcc installed, make links them with musl: they start faster)"
}

// linkage reads the executable's ELF headers: a binary with neither a
// program interpreter (the dynamic loader) nor a needed shared library is
// static, which is what `ldd` reports as "not a dynamic executable".
func linkage(exe string) (string, []string) {
	f, err := elf.Open(exe)
	if err != nil {
		return "unknown", nil
	}
	defer f.Close()
	needs, err := f.ImportedLibraries()
	if err != nil {
		return "unknown", nil
	}
	interp := false
	for _, p := range f.Progs {
		interp = interp || p.Type == elf.PT_INTERP
	}
	if !interp && len(needs) == 0 {
		return "static", nil
	}
	return "dynamic", needs
}

// seccompLinkage says in words how libseccomp reached this binary.
func (bi buildInfo) seccompLinkage() string {
	switch bi.Linkage {
	case "static":
		return "linked statically (the binary needs no shared library)"
	case "dynamic":
		for _, n := range bi.Needs {
			if strings.HasPrefix(n, "libseccomp.so") {
				return "linked dynamically (" + n + " must be installed)"
			}
		}
		return "linked statically into a dynamic binary (needs " + strings.Join(bi.Needs, ", ") + ")"
	}
	return "linkage unknown (the executable could not be read)"
}

func (bi buildInfo) writeText(w io.Writer) error {
	commit := bi.Commit
	switch {
	case commit == "":
		commit = "unknown (not built from a git checkout)"
	case bi.Modified:
		commit += " (with uncommitted changes)"
	}
	if bi.CommitDate != "" {
		commit += ", " + bi.CommitDate
	}
	built := bi.BuildDate
	if built == "" {
		built = "unknown (not a release build; make release stamps it)"
	}
	_, err := fmt.Fprintf(w, "brig %s\ncommit:  %s\nbuilt:   %s\ngo:      %s %s\nseccomp: libseccomp %s, %s\njail:    %s\n",
		bi.Version, commit, built, bi.Go, bi.Platform, bi.Libseccomp, bi.seccompLinkage(), bi.jailLinkage())
	return err
}
