package jail

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Credential files of common tools. Two kinds:
//
//   - credentialPaths (exposure.go) are dedicated stores, hidden whole
//     wherever the jail would otherwise show them;
//   - credentialConfigs are configuration files that MAY carry a token
//     beside ordinary settings (cargo's config.toml with [registry] token,
//     pip.conf with a password in index-url, .npmrc with _authToken, ...):
//     hidden when their content holds one (credentialLine), shown otherwise
//     so the tool keeps its configuration.

// credentialConfigs are home-relative configuration files checked by
// content.
var credentialConfigs = []string{
	".cargo/config.toml", ".cargo/config", ".config/pip/pip.conf", ".pip/pip.conf", ".config/uv/uv.toml",
	".bunfig.toml", ".config/pypoetry/config.toml", ".condarc", ".gitconfig", ".config/git/config",
	".gradle/init.gradle", ".sbt/repositories", ".config/helm/repositories.yaml", ".terraformrc",
}

// secretKeyPart is the part of a key name that makes its value a secret.
const secretKeyPart = `(?:token|passw(?:or)?d|secret|_auth|authtoken|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth)`

// credentialKeyValue matches "key = value", "key: value" and JSON's
// "key": "value" anywhere in a line, for keys naming a secret. Group 1 is
// the key, group 2 the value.
var credentialKeyValue = regexp.MustCompile(`(?i)(?:^|[\s{,;])["']?([\w.:/@-]*` + secretKeyPart + `)["']?\s*[:=]\s*("[^"]*"|'[^']*'|\$\{[^}]*\}|[^\s,;}]*)`)

// credentialElement matches XML's <password>value</password>.
var credentialElement = regexp.MustCompile(`(?i)<([\w.:-]*` + secretKeyPart + `)>([^<]*)<`)

// envReference is a value that only names a variable (${NPM_TOKEN},
// $TOKEN, %TOKEN%): no secret in the file itself.
var envReference = regexp.MustCompile(`^["']?(\$\{[A-Za-z_][A-Za-z0-9_.]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%)["']?$`)

// placeholderValue are values that hold no secret.
var placeholderValue = map[string]bool{"": true, "null": true, "none": true, "true": true, "false": true, "yes": true,
	"no": true, "0": true, "1": true, "[": true, "{": true, "[]": true, "{}": true, "~": true}

// literalSecret reports whether a value is a secret written in the file
// (not empty, not a placeholder, not only a variable reference).
func literalSecret(v string) bool {
	v = strings.TrimSpace(v)
	return !placeholderValue[strings.ToLower(strings.Trim(v, `"'`))] && !envReference.MatchString(v)
}

// credentialLine reports whether one line of a configuration file holds a
// literal secret — a secret-named key with a literal value, or a URL with a
// user part (https://user:token@host) — and names the key (never the
// value).
func credentialLine(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' || t[0] == ';' {
		return "", false
	}
	for _, m := range credentialKeyValue.FindAllStringSubmatch(t, -1) {
		if literalSecret(m[2]) {
			return m[1], true
		}
	}
	for _, m := range credentialElement.FindAllStringSubmatch(t, -1) {
		if literalSecret(m[2]) {
			return m[1], true
		}
	}
	for _, m := range urlUserinfo.FindAllStringSubmatch(t, -1) {
		if !strings.Contains(strings.ToLower(m[1]), "ssh") || strings.Contains(m[2], ":") {
			return "a URL with credentials", true
		}
	}
	return "", false
}

// fileHoldsCredential scans a configuration file (up to 1 MiB) for a
// credential line; it returns what it found, never the value.
func fileHoldsCredential(path string) (string, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if what, ok := credentialLine(sc.Text()); ok {
			return what, true
		}
	}
	return "", false
}

// sandboxCredentialNames are file names that, anywhere in a sandbox, are a
// tool's credential store or a configuration that can hold one.
var sandboxCredentialNames = map[string]bool{
	".git-credentials": true, ".netrc": true, "_netrc": true, ".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true,
	".pypirc": true, "pip.conf": true, "pip.ini": true, "credentials": true, "credentials.toml": true,
	"config.toml": true, "config.json": true, "auth.json": true, "settings.xml": true, "settings-security.xml": true,
	"gradle.properties": true, ".vault-token": true, ".s3cfg": true, ".boto": true, ".pgpass": true, ".my.cnf": true,
	".terraformrc": true, "credentials.tfrc.json": true, ".bunfig.toml": true, "bunfig.toml": true, ".condarc": true,
	"auth.toml": true, "hosts.yml": true, "token": true,
}

// dedicatedStores are credential stores whose mere content is a secret.
var dedicatedStores = map[string]bool{".git-credentials": true, ".netrc": true, "_netrc": true, ".vault-token": true,
	".pgpass": true, "token": true}

// FindCredentials lists credentials a sandbox holds that jailed code could
// read or copy into the workspace: git configs of every .git (extraheader,
// credential.*, tokens in URLs; inside the bwrap jail these read sanitized,
// but they are on disk and the unjailed and Seatbelt backends show them),
// and the credential files of common tools (.git-credentials, .netrc,
// .npmrc with _authToken, .pypirc, cargo's credentials and config.toml
// tokens, docker's config.json auths, ...). Each finding is
// "relative/path: what" — never the value. The action warns with them
// (e.g. "set persist-credentials: false on actions/checkout").
func FindCredentials(sandbox string) ([]string, error) {
	var out []string
	s, err := takeSnapshot(sandbox, nil)
	if err != nil {
		return nil, err
	}
	for _, g := range gitConfigFiles(sandbox, s) {
		rel := strings.TrimPrefix(g.path, sandbox+"/")
		switch {
		case g.hidden != "":
			out = append(out, rel+": could not be checked for credentials ("+g.hidden+")")
		case len(g.removed) > 0:
			out = append(out, rel+": "+strings.Join(g.removed, ", "))
		}
	}
	err = walkNoFollow(sandbox, func(rel string, d fs.DirEntry) error {
		if d.IsDir() || !sandboxCredentialNames[d.Name()] || !d.Type().IsRegular() {
			return nil
		}
		abs := filepath.Join(sandbox, rel)
		if dedicatedStores[d.Name()] {
			if fi, err := d.Info(); err == nil && fi.Size() > 0 {
				out = append(out, rel+": a credential store")
			}
			return nil
		}
		if what, ok := fileHoldsCredential(abs); ok {
			out = append(out, rel+": "+what)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// FindHardLinks lists (sandbox-relative, at most limit) regular files of
// the sandbox with more than one link, outside .git directories. A step can
// edit such a file in place and so change every other name of it,
// wherever that lies (a package manager's store, another checkout): the
// jail confines names, not inodes. The action warns with them.
func FindHardLinks(sandbox string, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("jail: FindHardLinks needs a positive limit, got %d", limit)
	}
	var out []string
	errLimit := errors.New("limit")
	err := walkNoFollow(sandbox, func(rel string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if _, _, nlink, _, _, _, _ := statFields(fi); nlink > 1 {
			out = append(out, rel)
			if len(out) >= limit {
				return errLimit
			}
		}
		return nil
	})
	if errors.Is(err, errLimit) {
		err = nil
	}
	sort.Strings(out)
	return out, err
}

// walkNoFollow visits every entry of the sandbox (not following symlinks,
// not entering .git directories), calling fn with its relative path.
// Unlistable directories are skipped. It stops at fn's first error.
func walkNoFollow(sandbox string, fn func(rel string, d fs.DirEntry) error) error {
	stack := []string{""}
	n := 0
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ents, err := readDirNoFollow(filepath.Join(sandbox, rel))
		if err != nil {
			if rel == "" {
				return fmt.Errorf("jail: cannot list %s: %w", sandbox, err)
			}
			continue
		}
		for _, e := range ents {
			if n++; n > tripwireMaxEntries*8 {
				return fmt.Errorf("jail: %s has more than %d entries", sandbox, tripwireMaxEntries*8)
			}
			child := joinRel(rel, e.Name())
			if e.IsDir() {
				if e.Name() != gitName {
					stack = append(stack, child)
				}
				continue
			}
			if err := fn(child, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// maskableByContent reports whether a home configuration file inside an
// exposed root holds a credential and must be hidden.
func maskableByContent(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	_, ok := fileHoldsCredential(path)
	return ok
}
