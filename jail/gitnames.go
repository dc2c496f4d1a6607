package jail

import "strings"

// gitOwnNames are the entries git itself makes at the top of a git
// directory (gitrepository-layout(5), and the state files its commands
// leave: merges, rebases, bisections, editors' messages), those of a
// linked worktree's git directory (gitdir, locked), and the data of the
// tools that keep only data there (git-lfs, git-annex, git-svn, git
// filter-repo, git-crypt, gitk, git gui, git-branchless, git-machete).
// Any other name is some other program's, and programs read their
// settings from there: lazygit, for one, runs the pager its
// <gitdir>/lazygit.yml names as soon as it shows a diff (red team,
// 2026-12-02).
var gitOwnNames = map[string]bool{
	// The repository.
	"HEAD": true, "config": true, "config.worktree": true, "commondir": true,
	"gitdir": true, "locked": true, "index": true, "packed-refs": true,
	"shallow": true, "description": true, "objects": true, "refs": true,
	"reftable": true, "logs": true, "info": true, "hooks": true,
	"branches": true, "remotes": true, "modules": true, "worktrees": true,
	"rr-cache": true, "lost-found": true, "subtree-cache": true,
	// What commands leave.
	"FETCH_HEAD": true, "ORIG_HEAD": true, "MERGE_HEAD": true, "MERGE_MSG": true,
	"MERGE_MODE": true, "MERGE_RR": true, "MERGE_AUTOSTASH": true,
	"AUTO_MERGE": true, "CHERRY_PICK_HEAD": true, "REVERT_HEAD": true,
	"REBASE_HEAD": true, "COMMIT_EDITMSG": true, "TAG_EDITMSG": true,
	"SQUASH_MSG": true, "NOTES_EDITMSG": true, "NOTES_MERGE_PARTIAL": true,
	"NOTES_MERGE_REF": true, "NOTES_MERGE_WORKTREE": true,
	"EDIT_DESCRIPTION": true, "REPLACE_EDITOBJ": true, "ADD_EDIT.patch": true,
	"addp-hunk-edit.diff": true, "rebase-merge": true, "rebase-apply": true,
	"sequencer": true, "gc.pid": true, "gc.log": true,
	// Data of other tools (a hook of theirs, run by git in a call, may
	// write it: git-branchless's database).
	"lfs": true, "annex": true, "svn": true, "filter-repo": true,
	"git-crypt": true, "gitk.cache": true, "GITGUI_MSG": true, "GITGUI_BCK": true,
	"branchless": true, "machete": true,
}

// gitOwnPrefixes are the name prefixes of git's temporary files there:
// BISECT_* (a bisection), the index split and stash use
// (sharedindex.<id>, index.stash.<pid>) and git send-email's message.
var gitOwnPrefixes = []string{"BISECT_", "sharedindex.", "index.stash.", ".gitsendemail.msg."}

// GitOwnEntry reports whether name, an entry at the top of a git
// directory, is one git makes there (or a tool that keeps only data
// there): its lock files (NAME.lock) included. The supervisor takes any
// other entry a call made or changed out of the git directory
// (supervisor's sweepForeign), and the policy refuses a file tool's
// write to one.
func GitOwnEntry(name string) bool {
	if gitOwnNames[name] || strings.HasSuffix(name, ".lock") {
		return true
	}
	for _, p := range gitOwnPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
