package action

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// What the sandbox holds before anything runs can weaken the jail without
// any step doing wrong:
//
//   - credentials: actions/checkout leaves the job's token in .git/config
//     (http.<url>.extraheader) unless persist-credentials is false;
//     credential helpers, tokens in remote URLs and token files (.netrc,
//     .git-credentials, .npmrc, .pypirc) do the same. Jailed code can read
//     whatever the sandbox holds.
//   - hard links: a regular file with more than one link (a pnpm store,
//     `cp -l`, git's local clones) shares its content with a file that may
//     lie outside the sandbox; a step that writes to it changes both. The
//     jail confines paths, not inodes.
//
// checkSandbox finds both, so that the action can warn before the agent's
// steps run. It reports names only (a config key, a path), never a value.
// It is an interim, local check: the jail package is adding its own
// analysis (jail.FindCredentials, jail.FindHardLinks), which replaces this
// one when it lands.

// maxSandboxScan bounds the walk: beyond it the check says it stopped.
const maxSandboxScan = 500_000

// sandboxFindings is what checkSandbox found.
type sandboxFindings struct {
	Credentials []string // "path: what", sorted
	HardLinks   []string // sandbox-relative paths of regular files with nlink > 1 (the first few)
	HardLinked  int      // how many there are
	Truncated   bool     // the walk stopped at maxSandboxScan entries
	Err         string   // a problem that stopped the walk early
}

// credentialFiles are files whose mere presence is worth a warning when
// they hold the pattern (nil: always).
var credentialFiles = map[string]*regexp.Regexp{
	".git-credentials": nil,
	".netrc":           nil,
	"_netrc":           nil,
	".npmrc":           regexp.MustCompile(`(?i)(_authtoken|_auth|_password)\s*=`),
	".pypirc":          regexp.MustCompile(`(?i)^\s*password\s*[=:]`),
	".yarnrc.yml":      regexp.MustCompile(`(?i)npmauthtoken\s*:`),
}

// gitSecretKey matches git config keys (without their section) whose
// values are secrets; gitURLUser matches a URL with a user part.
var (
	gitSecretKey = regexp.MustCompile(`(?i)^(extraheader|.*token.*|.*passw.*|.*secret.*|cookiefile)$`)
	gitURLUser   = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*)://([^/\s@]+)@`)
)

func checkSandbox(root string) sandboxFindings {
	var f sandboxFindings
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: nothing the jail could read either
		}
		if n++; n > maxSandboxScan {
			f.Truncated = true
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(root, p)
		if !d.Type().IsRegular() {
			return nil
		}
		inGit := underGitDir(rel)
		name := d.Name()
		if inGit && name == "config" {
			if what := gitConfigSecrets(p); len(what) > 0 {
				f.Credentials = append(f.Credentials, filepath.ToSlash(rel)+": "+strings.Join(what, ", "))
			}
		}
		if re, ok := credentialFiles[name]; ok && !inGit {
			if re == nil || fileMatches(p, re) {
				f.Credentials = append(f.Credentials, filepath.ToSlash(rel)+": a credentials file")
			}
		}
		if inGit {
			return nil // every .git is protected: no step writes there
		}
		if info, err := d.Info(); err == nil && linkCount(info) > 1 {
			f.HardLinked++
			if len(f.HardLinks) < 5 {
				f.HardLinks = append(f.HardLinks, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		f.Err = err.Error()
	}
	sort.Strings(f.Credentials)
	return f
}

// underGitDir reports whether a sandbox-relative path lies in a .git
// directory at any depth.
func underGitDir(rel string) bool {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// gitConfigSecrets names (never shows) what in a git config file is a
// credential: secret-bearing keys, credential sections, URLs with a user
// part (ssh user names without a password excepted).
func gitConfigSecrets(path string) []string {
	data, err := readSmall(path)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			section = strings.ToLower(strings.Fields(strings.Trim(line[1:end], " \t") + " ")[0])
			if section == "credential" {
				add("credential.* settings")
			}
			continue
		}
		key, val, _ := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if gitSecretKey.MatchString(key) {
			add(section + "." + strings.ToLower(key))
		}
		if m := gitURLUser.FindStringSubmatch(val); m != nil {
			if !strings.Contains(strings.ToLower(m[1]), "ssh") || strings.Contains(m[2], ":") {
				add("a URL with credentials (" + section + "." + strings.ToLower(key) + ")")
			}
		}
	}
	return out
}

func fileMatches(path string, re *regexp.Regexp) bool {
	data, err := readSmall(path)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// readSmall reads at most 1 MiB of a file: a config larger than that is
// not read further.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}
