package jail

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Git configuration files can carry the job's credentials: actions/checkout
// leaves the token as http.https://github.com/.extraheader, credential
// helpers and usernames live under credential.*, and a remote URL can hold
// a token as its user part. Inside the bwrap jail every git config file of
// every .git in the sandbox reads through a sanitized copy bound over it;
// the same analysis tells the action what to warn about (FindCredentials).

// secretKeyName matches configuration key names (lower case, without their
// section) whose values are secrets.
var secretKeyName = regexp.MustCompile(`token|passw|pass$|secret|apikey|api-key|extraheader|cookie|authorization|credential|private-?key`)

// authHeaderValue matches a value that is an HTTP Authorization header.
var authHeaderValue = regexp.MustCompile(`(?i)\bauthorization\s*:`)

// urlUserinfo matches the user part of a URL: scheme://USERINFO@.
var urlUserinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*)://([^/\s?#"]*)@`)

// stripURLUserinfo removes credentials from every URL in s: the whole user
// part, except for ssh URLs whose user name is no secret (only a password
// after it is removed). It reports whether anything changed.
func stripURLUserinfo(s string) (string, bool) {
	changed := false
	out := urlUserinfo.ReplaceAllStringFunc(s, func(m string) string {
		sub := urlUserinfo.FindStringSubmatch(m)
		scheme, info := strings.ToLower(sub[1]), sub[2]
		if strings.Contains(scheme, "ssh") {
			user, _, hasPass := strings.Cut(info, ":")
			if !hasPass {
				return m
			}
			changed = true
			return sub[1] + "://" + user + "@"
		}
		changed = true
		return sub[1] + "://"
	})
	return out, changed
}

// errGitConfigSyntax marks a file the sanitizer cannot parse; it is then
// hidden whole rather than shown with credentials.
var errGitConfigSyntax = errors.New("not a git config file the jail can parse")

// sanitizeGitConfig returns data with every credential removed, and what it
// removed or rewrote (section.key names, never values). Lines it keeps are
// kept byte for byte.
func sanitizeGitConfig(data []byte) ([]byte, []string, error) {
	var out bytes.Buffer
	var removed []string
	note := func(s string) {
		for _, r := range removed {
			if r == s {
				return
			}
		}
		removed = append(removed, s)
	}
	lines := strings.SplitAfter(string(data), "\n")
	section, sub := "", ""
	inSection := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || strings.TrimRight(trimmed, "\r\n") == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			out.WriteString(line)
			continue
		}
		if trimmed[0] == '[' {
			name, subsection, rest, err := parseGitSectionHeader(trimmed)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: line %d: %v", errGitConfigSyntax, i+1, err)
			}
			section, sub, inSection = name, subsection, true
			clean, changed := stripURLUserinfo(sub)
			if changed {
				note(section + " section name (URL credentials)")
				sub = clean
			}
			if changed || strings.TrimSpace(rest) != "" && !isGitComment(rest) {
				// Rewritten header, and any key that followed it on the line
				// goes through the key path below on a line of its own.
				out.WriteString(renderGitSectionHeader(section, sub))
				out.WriteString("\n")
				if strings.TrimSpace(rest) == "" || isGitComment(rest) {
					continue
				}
				lines[i] = rest
				i--
				continue
			}
			out.WriteString(line)
			continue
		}
		if !inSection {
			return nil, nil, fmt.Errorf("%w: line %d: a key outside any section", errGitConfigSyntax, i+1)
		}
		key, value, consumed, err := parseGitKeyValue(lines[i:])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: line %d: %v", errGitConfigSyntax, i+1, err)
		}
		raw := strings.Join(lines[i:i+consumed], "")
		i += consumed - 1
		lkey := strings.ToLower(key)
		full := section + "." + lkey
		if sub != "" {
			full = section + "." + sub + "." + lkey
		}
		switch {
		case section == "credential":
			note(full)
			continue
		case secretKeyName.MatchString(lkey):
			note(full)
			continue
		case value != nil && authHeaderValue.MatchString(*value):
			note(full)
			continue
		}
		if value != nil {
			if clean, changed := stripURLUserinfo(*value); changed {
				note(full + " (URL credentials)")
				out.WriteString("\t" + key + " = " + quoteGitValue(clean) + "\n")
				continue
			}
		}
		out.WriteString(raw)
	}
	sort.Strings(removed)
	return out.Bytes(), removed, nil
}

func isGitComment(s string) bool {
	t := strings.TrimSpace(s)
	return t == "" || t[0] == '#' || t[0] == ';'
}

// parseGitSectionHeader parses "[name]", "[name.sub]" or `[name "sub"]` at
// the start of s and returns the lower-case name, the subsection and what
// follows the closing bracket.
func parseGitSectionHeader(s string) (name, sub, rest string, err error) {
	i := 1
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-' || s[i] == '.') {
		i++
	}
	name = strings.ToLower(s[1:i])
	if name == "" {
		return "", "", "", errors.New("empty section name")
	}
	if i < len(s) && s[i] == ']' {
		if dot := strings.IndexByte(name, '.'); dot >= 0 {
			name, sub = name[:dot], name[dot+1:]
			if name == "" || sub == "" {
				return "", "", "", errors.New("malformed section name")
			}
		}
		return name, sub, s[i+1:], nil
	}
	if strings.Contains(name, ".") {
		return "", "", "", errors.New("a dotted section name with a quoted subsection")
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i >= len(s) || s[i] != '"' {
		return "", "", "", errors.New("malformed section header")
	}
	i++
	var b strings.Builder
	for {
		if i >= len(s) || s[i] == '\n' {
			return "", "", "", errors.New("unterminated subsection name")
		}
		c := s[i]
		if c == '"' {
			i++
			break
		}
		if c == '\\' && i+1 < len(s) && s[i+1] != '\n' {
			i++
			c = s[i]
		}
		b.WriteByte(c)
		i++
	}
	if i >= len(s) || s[i] != ']' {
		return "", "", "", errors.New("malformed section header")
	}
	return name, b.String(), s[i+1:], nil
}

func renderGitSectionHeader(name, sub string) string {
	if sub == "" {
		return "[" + name + "]"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return "[" + name + ` "` + r.Replace(sub) + `"]`
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// parseGitKeyValue parses one variable starting at lines[0] (which may
// continue over more lines with a trailing backslash) and returns its name,
// its decoded value (nil for a bare boolean) and how many lines it used.
func parseGitKeyValue(lines []string) (key string, value *string, consumed int, err error) {
	s := strings.TrimLeft(lines[0], " \t")
	i := 0
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-') {
		i++
	}
	key = s[:i]
	if key == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return "", nil, 0, errors.New("invalid variable name")
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i >= len(s) || s[i] == '\n' || s[i] == '\r' || s[i] == '#' || s[i] == ';' {
		return key, nil, 1, nil
	}
	if s[i] != '=' {
		return "", nil, 0, errors.New("expected '=' after the variable name")
	}
	i++
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	var b strings.Builder
	quoted := false
	line := 0
	for {
		if i >= len(s) {
			if quoted {
				return "", nil, 0, errors.New("unterminated quoted value")
			}
			break // end of file without newline
		}
		c := s[i]
		switch {
		case c == '\n' || (c == '\r' && i+1 < len(s) && s[i+1] == '\n'):
			if quoted {
				return "", nil, 0, errors.New("newline inside a quoted value")
			}
			v := strings.TrimRight(b.String(), " \t")
			return key, &v, line + 1, nil
		case c == '\\':
			if i+1 >= len(s) {
				return "", nil, 0, errors.New("backslash at end of file")
			}
			n := s[i+1]
			if n == '\n' || (n == '\r' && i+2 < len(s) && s[i+2] == '\n') {
				line++
				if line >= len(lines) {
					return "", nil, 0, errors.New("continuation at end of file")
				}
				s, i = lines[line], 0
				continue
			}
			switch n {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '\\', '"':
				b.WriteByte(n)
			default:
				return "", nil, 0, fmt.Errorf("invalid escape \\%c", n)
			}
			i += 2
			continue
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '#' || c == ';'):
			v := strings.TrimRight(b.String(), " \t")
			return key, &v, line + 1, nil
		default:
			b.WriteByte(c)
		}
		i++
	}
	v := strings.TrimRight(b.String(), " \t")
	return key, &v, line + 1, nil
}

// quoteGitValue renders a value git reads back unchanged.
func quoteGitValue(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`)
	return `"` + r.Replace(v) + `"`
}

// gitConfigMax bounds the git config files the jail reads to sanitize; a
// larger one is hidden whole.
const gitConfigMax = 1 << 20

// gitConfigFile is one git config file of the sandbox and how the jail
// shows it.
type gitConfigFile struct {
	path    string   // absolute
	clean   []byte   // the content shown in the jail when it differs
	removed []string // what was removed (names); empty when nothing was
	hidden  string   // why the whole file is hidden (it could not be parsed), or ""
}

// needsOverlay reports whether the jail must show something else.
func (g gitConfigFile) needsOverlay() bool { return len(g.removed) > 0 || g.hidden != "" }

// isGitConfigName: the files git reads its repository settings from.
func isGitConfigName(base string) bool { return base == "config" || base == "config.worktree" }

// gitConfigFiles lists the config files of every git directory in the
// snapshot (.git directories, in-sandbox gitdirs, and the gitdirs below
// them: modules/<name>, worktrees/<name>). A git directory is recognised by
// its HEAD file.
func gitConfigFiles(sandbox string, s *snapshot) []gitConfigFile {
	var rels []string
	for rel, id := range s.entries {
		if id.kind != kFile || !isGitConfigName(filepath.Base(rel)) || inObjectStore(rel) {
			continue
		}
		dir := filepath.Dir(rel)
		if head, ok := s.entries[filepath.Join(dir, "HEAD")]; !ok || head.kind != kFile {
			continue
		}
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	var out []gitConfigFile
	for _, rel := range rels {
		out = append(out, readGitConfig(filepath.Join(sandbox, rel)))
	}
	return out
}

func readGitConfig(path string) gitConfigFile {
	g := gitConfigFile{path: path}
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		g.hidden = "unreadable: " + err.Error()
		return g
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, gitConfigMax+1))
	switch {
	case err != nil:
		g.hidden = "unreadable: " + err.Error()
	case len(data) > gitConfigMax:
		g.hidden = fmt.Sprintf("larger than %d bytes", gitConfigMax)
	default:
		g.clean, g.removed, err = sanitizeGitConfig(data)
		if err != nil {
			g.hidden = err.Error()
		}
	}
	if g.hidden != "" {
		g.clean = hiddenGitConfig(g.hidden)
		g.removed = nil
	}
	return g
}

func hiddenGitConfig(why string) []byte {
	return []byte("# deponent jail: this git config is hidden in the jail (" + why +
		"); credentials could not be separated from the rest\n")
}

// IsGitConfig reports whether name (a slash-separated path inside the
// sandbox) is a file git reads a repository's settings from — config or
// config.worktree in a git directory — given a function that reports
// whether a sandbox-relative path exists as a regular file.
func IsGitConfig(name string, isFile func(string) bool) bool {
	if !isGitConfigName(path.Base(name)) || inObjectStore(name) {
		return false
	}
	return isFile(path.Join(path.Dir(name), "HEAD"))
}

// GitConfigAsJailed returns a git config file's content as jailed code
// reads it: without credentials (the same sanitizer as the bwrap overlay),
// or a placeholder when they cannot be separated from the rest. removed
// names what was taken out (keys, never values). Callers that read sandbox
// files outside the jail — the Cell's read_file — show this instead of
// the bytes on disk, so no tool call reads what the jail hides.
func GitConfigAsJailed(data []byte) (shown []byte, removed []string) {
	if len(data) > gitConfigMax {
		return hiddenGitConfig(fmt.Sprintf("larger than %d bytes", gitConfigMax)), []string{"the whole file"}
	}
	clean, removed, err := sanitizeGitConfig(data)
	if err != nil {
		return hiddenGitConfig(err.Error()), []string{"the whole file"}
	}
	return clean, removed
}
