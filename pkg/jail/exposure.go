package jail

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// systemDirs are exposed read-only inside the bwrap jail when present: the
// OS (programs, libraries, configuration) and /opt, where CI images put
// toolchains (e.g. /opt/hostedtoolcache). A host symlink (/bin → usr/bin on
// merged-/usr systems) is recreated as the same symlink.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// neverExposed are host trees no PATH entry or extra path may expose: they
// hold sockets (docker.sock, dbus, systemd), kernel interfaces or state.
var neverExposed = []string{"/proc", "/sys", "/dev", "/run", "/var/run", "/var/lib", "/boot"}

// etcMasks are files and directories under /etc hidden behind an empty
// read-only file or directory. /etc itself is exposed because programs need
// passwd/group, ld.so.cache, ssl certs, alternatives and locale data; these
// hold secrets readable by root (the jail of a root runner is uid 0, and
// dropping capabilities does not change file ownership).
var etcMasks = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private", "/etc/security/opasswd",
	"/etc/krb5.keytab", "/etc/docker", "/etc/containers/auth.json",
	"/etc/NetworkManager/system-connections", "/etc/wpa_supplicant", "/etc/netplan",
	"/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/etc/credstore", "/etc/credstore.encrypted",
	"/etc/ssh/ssh_host_*_key", // private host keys (glob)
}

// credentialPaths are the real home's credential locations, relative to it:
// dedicated stores of the common tools, hidden whole wherever the jail
// would otherwise show them. The jail never exposes the home itself; these
// matter when a toolchain root under the home is exposed (e.g. ~/.cargo
// holds credentials.toml) and on macOS, where reads are allowed by default
// and these are denied. Configuration files that only may carry a token
// are in credentialConfigs (credentials.go), hidden when they do.
var credentialPaths = []string{
	// ssh, gpg, keyrings, password managers
	".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".local/share/python_keyring", ".config/op",
	// git hosts and their CLIs
	".git-credentials", ".config/git/credentials", ".netrc", "_netrc", ".config/gh", ".config/hub", ".config/glab-cli",
	".config/github-copilot",
	// clouds and infrastructure
	".aws", ".azure", ".config/gcloud", ".oci", ".boto", ".s3cfg", ".kube", ".minikube", ".docker",
	".config/containers/auth.json", ".terraform.d/credentials.tfrc.json", ".vault-token",
	".config/doctl", ".config/hcloud", ".fly", ".config/flyctl", ".wrangler", ".config/configstore",
	".pulumi/credentials.json", ".databrickscfg", ".config/rclone", ".config/sops",
	// package registries
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".config/pypoetry/auth.toml", ".cargo/credentials",
	".cargo/credentials.toml", ".gem/credentials", ".bundle/config", ".m2/settings.xml", ".m2/settings-security.xml",
	".gradle/gradle.properties", ".ivy2/.credentials", ".nuget/NuGet/NuGet.Config", ".config/NuGet/NuGet.Config",
	".composer/auth.json", ".config/composer/auth.json", ".hex/hex.config", ".config/dart/pub-credentials.json",
	".pub-cache/credentials.json",
	// databases and mail
	".pgpass", ".my.cnf", ".mylogin.cnf", ".dbt/profiles.yml", ".msmtprc",
	// AI agents' and model hubs' keys
	".codex", ".claude", ".claude.json", ".config/claude", ".huggingface/token", ".cache/huggingface/token",
	// macOS
	"Library/Keychains",
}

// homeContainers are directories under a home that hold unrelated things;
// one of them is never exposed as a whole (~/.local/bin may be, ~/.local
// not).
var homeContainers = map[string]bool{".local": true, ".config": true, "Library": true, ".cache": true}

// prefixNames are PATH directory names whose programs live in their
// parent: bin, sbin (a prefix with lib, share, ...) and shims (pyenv,
// rbenv, asdf: the shims call back into the tool's own tree).
var prefixNames = map[string]bool{"bin": true, "sbin": true, "shims": true}

// runnerMarkers are files of a GitHub Actions runner's installation
// directory (its credentials and registration): a directory holding one is
// never exposed, nor anything containing it.
var runnerMarkers = []string{".runner", ".credentials", ".credentials_rsaparams"}

// exposureGuard decides which host trees may be exposed read-only.
type exposureGuard struct {
	home    string
	sandbox string
	// sensitive are directories that no exposed tree may be or contain:
	// the sandbox, the jail's own private directories, and the runner's
	// directories (RUNNER_TEMP with its file-command files, the work
	// directory with every job's checkout, the workspace, the runner's
	// installation with its credentials).
	sensitive []string
}

// newExposureGuard derives the sensitive directories from the caller's
// environment (getenv: os.Getenv in production).
func newExposureGuard(home, sandbox, tempRoot string, getenv func(string) string) exposureGuard {
	g := exposureGuard{home: home, sandbox: sandbox}
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		g.sensitive = append(g.sensitive, filepath.Clean(p))
	}
	add(sandbox)
	add(tempRoot)
	if rt := getenv("RUNNER_TEMP"); rt != "" {
		add(rt)
		add(filepath.Dir(rt)) // the work directory: _temp, _actions, every checkout
		// The installation directory, normally the work directory's parent.
		for d := filepath.Dir(rt); len(d) > 1; d = filepath.Dir(d) {
			if hasRunnerMarker(d) {
				add(d)
				break
			}
		}
	}
	for _, k := range []string{"RUNNER_WORKSPACE", "GITHUB_WORKSPACE"} {
		add(getenv(k))
	}
	// The file-command files live in a directory of their own.
	for _, k := range []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH"} {
		if v := getenv(k); v != "" {
			add(filepath.Dir(v))
		}
	}
	return g
}

// runnerSearch are where runner installations are looked for inside the
// system trees (one and two levels down): /opt/actions-runner,
// /opt/runners/1, /usr/local/actions-runner.
var runnerSearch = []string{"/opt", "/usr/local"}

// systemMasks are the runner's directories that lie inside a system tree
// the jails expose whole (a self-hosted runner installed under /opt): the
// guard's sensitive directories there, and every runner installation found
// one or two levels below runnerSearch, outermost only. The sandbox is not
// among them (nor, below a masked directory, anything bound later: the
// sandbox, the private directories, the relay): later binds cover the
// mask. The jails hide each behind an empty tmpfs, read-only once the
// binds inside it are made.
func (g exposureGuard) systemMasks() []string {
	var found []string
	for _, s := range g.sensitive {
		if s != g.sandbox && coveredBySystem(s) {
			found = append(found, s)
		}
	}
	for _, root := range runnerSearch {
		for _, pat := range []string{"*", "*/*"} {
			for _, m := range runnerMarkers {
				hits, _ := filepath.Glob(filepath.Join(root, pat, m))
				for _, h := range hits {
					d := filepath.Dir(h)
					if r, err := filepath.EvalSymlinks(d); err == nil && coveredBySystem(r) {
						found = append(found, r)
					}
				}
			}
		}
	}
	return minimalRoots(found)
}

func hasRunnerMarker(dir string) bool {
	for _, m := range runnerMarkers {
		if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
			return true
		}
	}
	return false
}

// allows reports whether tree may be exposed read-only, and why not.
func (g exposureGuard) allows(tree string) (bool, string) {
	if tree == "/" || tree == "" {
		return false, "it is the root"
	}
	if g.home != "" {
		if within(g.home, tree) {
			return false, "it is or contains the home " + g.home
		}
		if rel, ok := strings.CutPrefix(tree, g.home+"/"); ok && !strings.Contains(rel, "/") && homeContainers[rel] {
			return false, "it holds unrelated data of the home"
		}
		for _, c := range credentialPaths {
			if within(tree, filepath.Join(g.home, c)) {
				return false, "it is a credential location"
			}
		}
	}
	for _, n := range neverExposed {
		if within(tree, n) || within(n, tree) {
			return false, "it overlaps " + n + ", which is never exposed"
		}
	}
	for _, s := range g.sensitive {
		if within(s, tree) {
			return false, "it is or contains " + s + " (the sandbox, the jail's private directories or the runner's own)"
		}
	}
	if hasRunnerMarker(tree) {
		return false, "it is a runner installation (it holds the runner's credentials)"
	}
	return true, ""
}

// treeFor picks what to expose for one resolved directory holding programs:
// its prefix when the directory is a bin, sbin or shims dir and the prefix
// may be exposed, else the directory itself, else nothing (and why).
func (g exposureGuard) treeFor(dir string) (string, string) {
	cands := []string{dir}
	if prefixNames[filepath.Base(dir)] {
		cands = []string{filepath.Dir(dir), dir}
	}
	var why string
	for _, c := range cands {
		ok, w := g.allows(c)
		if ok {
			return c, ""
		}
		if why == "" {
			why = w
		}
	}
	return "", why
}

// maxProgramsScanned bounds how many entries of one PATH directory are
// looked at for what they need.
const maxProgramsScanned = 512

// programNeeds returns the directories the programs in dir need beyond dir:
// the resolved targets of symlinks (pipx and poetry link into their venvs)
// and the interpreters of scripts (#!/path).
func programNeeds(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	ents, _ := f.ReadDir(maxProgramsScanned)
	f.Close()
	seen := map[string]bool{}
	var out []string
	addDir := func(p string) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			d := filepath.Dir(r)
			if d != dir && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			addDir(p)
		case e.Type().IsRegular():
			if interp := shebang(p); interp != "" {
				addDir(interp)
			}
		}
	}
	sort.Strings(out)
	return out
}

// shebang returns the absolute interpreter of a script, "" otherwise.
func shebang(path string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	line, ok := strings.CutPrefix(string(buf[:n]), "#!")
	if !ok {
		return ""
	}
	line, _, _ = strings.Cut(line, "\n")
	fields := strings.Fields(line)
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return ""
	}
	return fields[0]
}

// exposure is what the bwrap jail shows read-only beyond the system dirs.
type exposure struct {
	// system are the runner's directories inside the system trees, hidden
	// behind an empty tmpfs (exposureGuard.systemMasks).
	system []string
	roots  []string // read-only binds (sorted, no root inside another)
	masks  []string // paths inside roots hidden behind an empty file or directory
	notes  []string // PATH entries that were not exposed, and why
}

// coveredBySystem reports whether a resolved path is already visible through
// the system binds.
func coveredBySystem(path string) bool {
	for _, d := range systemDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() && within(path, d) {
			return true
		}
	}
	return false
}

// computeExposure derives the read-only trees from the trusted PATH (each
// directory's prefix or the directory itself, and what its programs need —
// never their siblings, never the runner's own directories), the
// operator's extra paths, and the credential masks inside them.
//
// The jail's own private directories are guarded as the default TempRoot;
// a backend with another TempRoot uses computeExposureWith.
func computeExposure(pathDirs []string, home, sandbox string, extra []string) (exposure, error) {
	return computeExposureWith(pathDirs, extra, newExposureGuard(home, sandbox, tempRoot(Options{}), os.Getenv))
}

func computeExposureWith(pathDirs, extra []string, g exposureGuard) (exposure, error) {
	var ex exposure
	var roots, scanned []string
	ex.system = g.systemMasks()
	// Visible through the system binds, unless a mask hides it (a tool in
	// a runner's work directory under /opt): then it is exposed by the
	// rules below like any other tree.
	coveredBySystem := func(p string) bool { return coveredBySystem(p) && !coveredBy(p, ex.system) }
	for _, d := range pathDirs {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // absent: nothing to run from it anyway
		}
		if coveredBySystem(r) {
			continue
		}
		tree, why := g.treeFor(r)
		if tree == "" {
			ex.notes = append(ex.notes, fmt.Sprintf("PATH entry %s is not exposed in the jail: %s", d, why))
			continue
		}
		roots = append(roots, tree)
		scanned = append(scanned, r)
	}
	// What the programs need, exposed by the same rules. Not noted when
	// refused: the program may not need it after all.
	for _, d := range scanned {
		for _, need := range programNeeds(d) {
			if coveredBySystem(need) || coveredBy(need, roots) {
				continue
			}
			if tree, _ := g.treeFor(need); tree != "" {
				roots = append(roots, tree)
			}
		}
	}
	for _, e := range extra {
		if !filepath.IsAbs(e) {
			return ex, fmt.Errorf("jail: extra read-only path %q is not absolute", e)
		}
		r, err := filepath.EvalSymlinks(e)
		if err != nil {
			return ex, fmt.Errorf("jail: extra read-only path: %w", err)
		}
		if g.sandbox != "" && within(r, g.sandbox) {
			return ex, fmt.Errorf("jail: extra read-only path %q is inside the sandbox", e)
		}
		if ok, why := g.allows(r); !ok {
			return ex, fmt.Errorf("jail: extra read-only path %q cannot be exposed: %s", e, why)
		}
		roots = append(roots, r)
	}
	ex.roots = minimalRoots(roots)
	ex.masks = credentialMasks(ex.roots, g.home)
	return ex, nil
}

func coveredBy(p string, roots []string) bool {
	for _, r := range roots {
		if within(p, r) {
			return true
		}
	}
	return false
}

// minimalRoots sorts, dedups and drops roots inside another root.
func minimalRoots(roots []string) []string {
	sort.Strings(roots)
	var out []string
	for _, r := range roots {
		if len(out) > 0 && within(r, out[len(out)-1]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// credentialMasks lists credential locations of home that an exposed root
// would reveal: the dedicated stores always, the configuration files that
// may carry a token when they do. Symlinked ones are masked at their target
// when the target is exposed too.
func credentialMasks(roots []string, home string) []string {
	if home == "" {
		return nil
	}
	seen := map[string]bool{}
	var masks []string
	check := func(c string, byContent bool) {
		p := filepath.Join(home, c)
		fi, err := os.Lstat(p)
		if err != nil {
			return
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if p, err = filepath.EvalSymlinks(p); err != nil {
				return
			}
		}
		if seen[p] || !coveredBy(p, roots) || byContent && !maskableByContent(p) {
			return
		}
		seen[p] = true
		masks = append(masks, p)
	}
	for _, c := range credentialPaths {
		check(c, false)
	}
	for _, c := range credentialConfigs {
		check(c, true)
	}
	sort.Strings(masks)
	return masks
}

// existingEtcMasks expands etcMasks against the host, skipping symlinks
// (a bind would follow them) and absent paths; for a root runner it adds
// every file and directory under /etc that other users may not read
// (etcUnreadable).
func existingEtcMasks() []string {
	var out []string
	if os.Geteuid() == 0 {
		out = etcUnreadableCached("/etc")
	}
	for _, m := range etcMasks {
		matches := []string{m}
		if strings.ContainsAny(m, "*?[") {
			matches, _ = filepath.Glob(m)
		}
		for _, p := range matches {
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink == 0 {
				out = append(out, p)
			}
		}
	}
	return outermost(out)
}

// outermost drops duplicates and every path inside another of the list
// (a mask inside a masked directory has no mount point to land on).
func outermost(paths []string) []string {
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		inside := false
		for _, o := range out {
			if within(p, o) {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, p)
		}
	}
	return out
}

// maxEtcEntries bounds the walk of /etc (a few thousand entries on common
// systems); past it the rest of /etc keeps only the listed masks.
const maxEtcEntries = 50000

// etcUnreadable lists what under dir "others" may not read: regular files
// without o+r and directories without o+r or o+x (not descended). A root
// runner's jailed uid maps to host uid 0, which owns them, so the
// permission checks that keep an unprivileged account out of
// /etc/mysql/debian.cnf, a WireGuard or VPN key, a cluster's admin
// kubeconfig, an IPsec secret or a service's password file let the step
// read them: the jail hides them as an unprivileged account finds them.
// Symlinks are not followed (a target under dir is judged where it lies).
func etcUnreadable(dir string, budget int) (out []string, dirs map[string]dirKey) {
	dirs = map[string]dirKey{}
	var walk func(d string)
	walk = func(d string) {
		if fi, err := os.Lstat(d); err == nil {
			dirs[d] = keyOf(fi)
		}
		ents, err := readDirNoFollow(d)
		if err != nil {
			return
		}
		for _, e := range ents {
			if budget--; budget < 0 {
				return
			}
			p := filepath.Join(d, e.Name())
			fi, err := e.Info()
			if err != nil {
				continue
			}
			perm := fi.Mode().Perm()
			switch {
			case fi.IsDir():
				if perm&0o005 != 0o005 {
					out = append(out, p)
					continue
				}
				walk(p)
			case fi.Mode().IsRegular():
				if perm&0o004 == 0 {
					out = append(out, p)
				}
			}
		}
	}
	walk(dir)
	return out, dirs
}

// dirKey is what changes in a directory's stat when an entry is added,
// removed or renamed, or the directory's own mode changes.
type dirKey struct {
	mtime int64
	mode  os.FileMode
}

func keyOf(fi os.FileInfo) dirKey { return dirKey{fi.ModTime().UnixNano(), fi.Mode()} }

// etcCache keeps etcUnreadable's answer while no directory it walked
// changed (one lstat per directory instead of one per entry: the walk costs
// milliseconds, every step pays the check). Not seen until a directory
// changes: a file already there whose mode is narrowed later (it was
// readable by everyone when the walk saw it).
var etcCache struct {
	sync.Mutex
	root string
	dirs map[string]dirKey
	out  []string
}

func etcUnreadableCached(root string) []string {
	etcCache.Lock()
	defer etcCache.Unlock()
	if etcCache.root == root && etcCache.dirs != nil {
		valid := true
		for d, k := range etcCache.dirs {
			fi, err := os.Lstat(d)
			if err != nil || keyOf(fi) != k {
				valid = false
				break
			}
		}
		if valid {
			return append([]string(nil), etcCache.out...)
		}
	}
	out, dirs := etcUnreadable(root, maxEtcEntries)
	etcCache.root, etcCache.dirs, etcCache.out = root, dirs, out
	return append([]string(nil), out...)
}
