package gate

// cp, mv, rm: GNU coreutils' options (prefixes included, so --rec is
// --recursive). Sources are read (cp) or removed (mv); the destination,
// and the name each source takes inside it, are written; rm's operands are
// removed. Nothing may be removed or written outside the sandbox, on a
// protected path, or as the sandbox root; a directory holding a protected
// path is not removed or moved either, and a moved or copied tree does
// not land where it could create one.

import (
	"path"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

const backupSuffixRefusal = "a backup suffix with a / in it, or one that can finish a protected name (`-S it` makes a backup of .g named .git)"

const (
	linkRefusal  = "makes links instead of copies, and a link to a protected file would let it be changed through the link"
	derefRefusal = "follows symbolic links, which may lead out of the sandbox"
)

var cpSpec = (&optSpec{Name: "cp", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
	flag("a", "archive"), flag("", "attributes-only"), optval(roleText, "", "backup"), flag("b"),
	flag("", "copy-contents"), flag("d"), flag("f", "force"), flag("i", "interactive"), flag("H"),
	flag("n", "no-clobber"), flag("P", "no-dereference"), flag("p"), optval(roleText, "", "preserve"),
	val(roleText, "", "no-preserve"), flag("Rr", "recursive"), optval(roleText, "", "reflink"),
	flag("", "remove-destination"), val(roleText, "", "sparse"), flag("", "strip-trailing-slashes"),
	Opt{Short: "S", Long: []string{"suffix"}, Arg: reqArg, Role: roleText, Key: "suffix"},
	Opt{Short: "t", Long: []string{"target-directory"}, Arg: reqArg, Role: roleWrite, Key: "target-directory"},
	Opt{Short: "T", Long: []string{"no-target-directory"}, Key: "no-target-directory"},
	optval(roleText, "u", "update"), flag("v", "verbose"), flag("x", "one-file-system"), flag("Z"),
	optval(roleText, "", "context"), flag("", "debug"), flag("", "help"), flag("", "version"),
	refused(flag("l", "link"), linkRefusal, "copy the files"),
	refused(flag("s", "symbolic-link"), linkRefusal, "copy the files"),
	refused(flag("L", "dereference"), derefRefusal, "use -H to follow only the links you name"),
	refused(flag("", "parents"), "builds destination paths from the source names, which the gate does not follow", "create the directory with mkdir -p and copy into it"),
	refused(flag("", "keep-directory-symlink"), derefRefusal, "leave it out"),
}}).build()

var mvSpec = (&optSpec{Name: "mv", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
	optval(roleText, "", "backup"), flag("b"), flag("f", "force"), flag("i", "interactive"),
	flag("n", "no-clobber"), flag("", "strip-trailing-slashes"),
	Opt{Short: "S", Long: []string{"suffix"}, Arg: reqArg, Role: roleText, Key: "suffix"},
	Opt{Short: "t", Long: []string{"target-directory"}, Arg: reqArg, Role: roleWrite, Key: "target-directory"},
	Opt{Short: "T", Long: []string{"no-target-directory"}, Key: "no-target-directory"},
	optval(roleText, "u", "update"), flag("v", "verbose"), flag("Z", "context"), flag("", "debug"),
	flag("", "no-copy"), flag("", "help"), flag("", "version"),
	refused(flag("", "exchange"), "swaps two files, which the gate does not model", "use two mv commands"),
}}).build()

var rmSpec = (&optSpec{Name: "rm", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
	flag("f", "force"), flag("i"), flag("I"), optval(roleText, "", "interactive"), flag("", "one-file-system"),
	optval(roleText, "", "preserve-root"), flag("rR", "recursive"), flag("d", "dir"), flag("v", "verbose"),
	flag("", "help"), flag("", "version"),
	refused(flag("", "no-preserve-root"), "turns off rm's own refusal to remove /", "leave it out"),
}}).build()

var progCp = &Program{
	Family: "cp", Names: []string{"cp"}, Spec: cpSpec,
	Refuses: []string{backupSuffixRefusal},
	Summary: "Copies files: sources are read, the destination (and each source's name inside it) is written — inside the sandbox, off protected paths. -r copies trees, and where a tree lands (the destination with -T, with SRC/. or when it is not an existing directory; else DEST/NAME) must not hold a protected path, since the tree's entries are created below it.",
	Operands: func(inv *invocation, sub *argList, r *scanResult) *violation {
		return copyOperands(inv, sub, r, roleRead)
	},
}

var progMv = &Program{
	Family: "mv", Names: []string{"mv"}, Spec: mvSpec,
	Refuses: []string{backupSuffixRefusal},
	Summary: "Moves files: sources are removed from their place (never the sandbox root, a protected path, or a directory holding one); the destination and each source's name inside it are written, and where a moved tree lands must not hold a protected path (`mv build/gh .github` would create .github/workflows).",
	Operands: func(inv *invocation, sub *argList, r *scanResult) *violation {
		return copyOperands(inv, sub, r, roleDelete)
	},
}

var progRm = &Program{
	Family: "rm", Names: []string{"rm"}, Spec: rmSpec, Operand: roleDelete,
	Summary: "Removes files, and trees with -r/--recursive: every operand must be inside the sandbox, not the sandbox root, not a protected path and not a directory holding one. A symbolic link is removed, not what it points to (unless written with a trailing '/').",
}

// copyOperands: cp and mv's SOURCE... DEST, SOURCE... -t DIR, or -T
// SOURCE DEST. When whole trees move (mv, cp -r/-R/-a), where each tree
// lands must not hold a protected path: its entries are created below it.
func copyOperands(inv *invocation, sub *argList, r *scanResult, srcRole Role) *violation {
	words := sub.words()
	if s := r.get("suffix"); s != nil {
		v, _ := s.value(words)
		if strings.ContainsRune(v, '/') {
			return refuse(evidence.ClassUnsafeOption, r.specName+" "+s.name+" backup suffix '"+shown(v)+"' names another directory; use a plain suffix such as ~ or .bak")
		}
		if name, ok := inv.g.suffixSpellsProtected(v); ok {
			return refuse(evidence.ClassProtectedPath, r.specName+" "+s.name+" backup suffix '"+shown(v)+"' can finish the protected name '"+name+
				"' (a backup of '"+shown(strings.TrimSuffix(name, v))+"' would be named '"+name+"'); use a suffix such as ~ or .bak, or --backup=numbered")
		}
	}
	trees := srcRole == roleDelete || r.has("recursive") || r.has("archive")
	written, landing := roleWrite, roleWrite
	if trees {
		written, landing = roleWriteDest, roleWriteTree
	}
	ops := r.operands
	var dest string
	var destArg int
	intoDir := true
	if t := r.get("target-directory"); t != nil {
		dest, _ = t.value(words)
		destArg = sub.at(t.val)
		for _, i := range ops {
			if base := path.Base(words[i]); base == "." || base == ".." {
				// -t DIR SRC/.: the contents land in DIR itself.
				inv.add(destArg, dest, landing, "the target directory of '"+shown(words[i])+"'")
			}
		}
	} else if len(ops) >= 2 {
		last := ops[len(ops)-1]
		dest, destArg = words[last], sub.at(last)
		intoDir = !r.has("no-target-directory")
		role := written
		if !intoDir {
			role = landing // -T: the source becomes the destination
		}
		for _, i := range ops[:len(ops)-1] {
			if base := path.Base(words[i]); base == "." || base == ".." {
				role = landing // SRC/. and SRC/..: the contents land in the destination itself
			}
		}
		inv.addWord(destArg, role)
		ops = ops[:len(ops)-1]
	}
	for _, i := range ops {
		src := words[i]
		inv.addWord(sub.at(i), srcRole)
		if dest != "" && intoDir && src != "-" {
			if base := path.Base(src); base != "/" && base != "." && base != ".." {
				inv.add(destArg, strings.TrimSuffix(dest, "/")+"/"+base, landing, "the destination of '"+shown(src)+"'")
			}
		}
	}
	return nil
}

// suffixSpellsProtected reports a protected name (a component of ".git",
// ".deponent" or another protected path) that a backup suffix could
// finish: a backup is the old name with the suffix appended, so with the
// suffix "it" an existing ".g" becomes ".git" (a git file that can point
// git anywhere). Names are compared as matchProtected compares them.
func (g *Gate) suffixSpellsProtected(suffix string) (string, bool) {
	fold := func(s string) string {
		s = strings.Map(func(r rune) rune {
			if isHiddenRune(r) {
				return -1
			}
			return r
		}, s)
		return strings.ToLower(strings.TrimRight(s, ". "))
	}
	sfx := fold(suffix)
	if sfx == "" {
		return "", false
	}
	for _, e := range append([]string{".git"}, g.anchored...) {
		for rest := e; rest != ""; {
			var c string
			c, rest = nextComponent(rest)
			if fc := fold(c); len(fc) > len(sfx) && strings.HasSuffix(fc, sfx) {
				return c, true
			}
		}
	}
	return "", false
}
