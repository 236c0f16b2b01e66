package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// credentialPaths are the real home's credential locations, relative to it.
// The jail never exposes the home itself; these matter when a toolchain root
// under the home is exposed (e.g. ~/.cargo holds credentials.toml) and on
// macOS, where reads are allowed by default and these are denied.
var credentialPaths = []string{
	".ssh", ".aws", ".azure", ".config/gh", ".config/gcloud", ".config/hub", ".config/git/credentials",
	".config/composer/auth.json", ".docker", ".netrc", ".git-credentials", ".gnupg", ".kube",
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
	".gem/credentials", ".m2/settings.xml", ".gradle/gradle.properties", ".terraform.d/credentials.tfrc.json",
	".vault-token", ".boto", ".s3cfg", ".password-store", ".local/share/keyrings",
	".local/share/python_keyring", ".composer/auth.json", ".nuget/NuGet/NuGet.Config",
	".oci", ".pgpass", ".my.cnf", ".msmtprc", ".config/op", ".config/rclone", "Library/Keychains",
}

// homeContainers are directories under a home that hold unrelated things;
// a toolchain in them is exposed one level deeper (~/.local/bin, not ~/.local).
var homeContainers = map[string]bool{".local": true, ".config": true, "Library": true}

// toolchainRoot maps a (symlink-resolved) PATH directory to the host tree to
// expose read-only so the programs in it work. Under the real home it is the
// first directory below it (~/.pyenv for ~/.pyenv/shims, ~/go for ~/go/bin):
// toolchains keep their interpreters and libraries beside their bin dirs.
// Elsewhere it is the prefix (parent of a bin/sbin dir). "" means do not
// expose (the home itself, anything containing it, credential locations).
func toolchainRoot(dir, home string) string {
	if home != "" && within(dir, home) {
		if dir == home {
			return ""
		}
		parts := strings.Split(strings.TrimPrefix(dir, home+"/"), "/")
		root := filepath.Join(home, parts[0])
		if homeContainers[parts[0]] {
			if len(parts) < 2 {
				return ""
			}
			root = filepath.Join(root, parts[1])
		}
		for _, c := range credentialPaths {
			if within(root, filepath.Join(home, c)) {
				return ""
			}
		}
		return root
	}
	root := dir
	if b := filepath.Base(dir); b == "bin" || b == "sbin" {
		root = filepath.Dir(dir)
	}
	if root == "/" || (home != "" && within(home, root)) {
		return ""
	}
	for _, n := range neverExposed {
		if within(root, n) || within(n, root) {
			return ""
		}
	}
	return root
}

// exposure is what the bwrap jail shows read-only beyond the system dirs.
type exposure struct {
	roots []string // read-only binds (sorted, no root inside another)
	masks []string // paths inside roots hidden behind an empty file or directory
	notes []string // PATH entries that were not exposed, and why
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

// computeExposure derives the read-only roots from the trusted PATH and the
// operator's extra paths, and the credential masks inside them.
func computeExposure(pathDirs []string, home, sandbox string, extra []string) (exposure, error) {
	var ex exposure
	var roots []string
	for _, d := range pathDirs {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // absent: nothing to run from it anyway
		}
		if coveredBySystem(r) {
			continue
		}
		root := toolchainRoot(r, home)
		if root == "" {
			ex.notes = append(ex.notes, fmt.Sprintf("PATH entry %s is not exposed in the jail", d))
			continue
		}
		roots = append(roots, root)
	}
	for _, e := range extra {
		if !filepath.IsAbs(e) {
			return ex, fmt.Errorf("jail: extra read-only path %q is not absolute", e)
		}
		r, err := filepath.EvalSymlinks(e)
		if err != nil {
			return ex, fmt.Errorf("jail: extra read-only path: %w", err)
		}
		if r == "/" || (home != "" && within(home, r)) {
			return ex, fmt.Errorf("jail: extra read-only path %q would expose the home %q", e, home)
		}
		if within(r, sandbox) {
			return ex, fmt.Errorf("jail: extra read-only path %q is inside the sandbox", e)
		}
		for _, n := range neverExposed {
			if within(r, n) || within(n, r) {
				return ex, fmt.Errorf("jail: extra read-only path %q overlaps %s, which is never exposed", e, n)
			}
		}
		roots = append(roots, r)
	}
	ex.roots = minimalRoots(roots)
	ex.masks = credentialMasks(ex.roots, home)
	return ex, nil
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
// would reveal. Symlinked ones are masked at their target when the target is
// exposed too.
func credentialMasks(roots []string, home string) []string {
	if home == "" {
		return nil
	}
	seen := map[string]bool{}
	var masks []string
	for _, c := range credentialPaths {
		p := filepath.Join(home, c)
		if fi, err := os.Lstat(p); err != nil {
			continue
		} else if fi.Mode()&os.ModeSymlink != 0 {
			if p, err = filepath.EvalSymlinks(p); err != nil {
				continue
			}
		}
		for _, r := range roots {
			if within(p, r) && !seen[p] {
				seen[p] = true
				masks = append(masks, p)
			}
		}
	}
	sort.Strings(masks)
	return masks
}

// existingEtcMasks expands etcMasks against the host, skipping symlinks
// (a bind would follow them) and absent paths.
func existingEtcMasks() []string {
	var out []string
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
	return out
}
