package action

import (
	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// What the sandbox holds before anything runs can weaken the jail without
// any step doing wrong:
//
//   - credentials: actions/checkout leaves the job's token in .git/config
//     (http.<url>.extraheader) unless persist-credentials is false;
//     credential helpers, tokens in remote URLs and the credential files of
//     common tools (.netrc, .git-credentials, .npmrc, .pypirc, cargo's,
//     docker's, …) do the same. Inside the bwrap jail git configs read
//     sanitized, but the files are on disk, and other files are readable by
//     jailed code.
//   - hard links: a regular file with more than one link (a pnpm store,
//     `cp -l`) shares its content with a file that may lie outside the
//     sandbox; a step that writes to it changes both. The jail confines
//     paths, not inodes.
//
// checkSandbox asks the jail package's analysis (jail.FindCredentials,
// jail.FindHardLinks), so that the action can warn before the agent's
// steps run. Findings name a path and what it holds, never a value.

// maxHardLinksListed bounds the hard-linked files looked for.
const maxHardLinksListed = 1000

// sandboxFindings is what checkSandbox found.
type sandboxFindings struct {
	Credentials []string // "path: what", sorted
	HardLinks   []string // sandbox-relative paths of regular files with nlink > 1 (the first few)
	HardLinked  int      // how many were found (at most maxHardLinksListed)
	Problems    []string // what stopped a check from covering the whole sandbox
}

func checkSandbox(root string) sandboxFindings {
	var f sandboxFindings
	creds, err := jail.FindCredentials(root)
	f.Credentials = creds
	if err != nil {
		f.Problems = append(f.Problems, "credentials: "+err.Error())
	}
	links, err := jail.FindHardLinks(root, maxHardLinksListed)
	if err != nil {
		f.Problems = append(f.Problems, "hard links: "+err.Error())
	}
	f.HardLinked = len(links)
	f.HardLinks = links
	if len(f.HardLinks) > 5 {
		f.HardLinks = f.HardLinks[:5]
	}
	return f
}
