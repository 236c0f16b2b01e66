package gate

import "testing"

var _ = progTable("cp",
	allow("cp x.txt y.txt", "issue 12: copy inside"),
	allow("cp -r src build/src-copy", "recursive inside"),
	allow("cp .git/config backup.cfg", "reading a protected path"),
	allow("cp -t out x.txt data.txt", "into a directory"),
	allow("cp -a src out", "archive"),
	deny("cp -r src /tmp/x", cEscape, "destination outside"),
	deny("cp x.txt .git/hooks/pre-commit", cProt, "into a hook"),
	deny("cp script.sed .git/hooks", cProt, "into the hooks directory"),
	deny("cp -r src .github/workflows", cProt, "into workflows"),
	deny("cp -l .git/config x", cUnsafe, "a hard link to a protected file"),
	deny("cp --link .git/config x", cUnsafe, "long form"),
	deny("cp -s x.txt y", cUnsafe, "a symbolic link"),
	deny("cp -L -r src out", cUnsafe, "follows links"),
	deny("cp --parents src/main.py out", cUnsafe, "destination built from the source"),
	deny("cp secret x", cEscape, "a source through a link out"),
	deny("cp -t /tmp x.txt", cEscape, "a target directory outside"),
	deny("cp -S /x a b", cUnsafe, "a backup suffix in another directory"),
	// Where a copied tree lands must not hold a protected path: the tree's
	// own entries (a workflows directory) are created below it.
	deny("cp -r build/. .github", cProt, "a tree's contents into .github: its workflows/ would land there"),
	deny("cp -rT build .github", cProt, "-T: the tree becomes .github"),
	deny("cp -r docs/. .", cProt, "a tree's contents into the sandbox root"),
	deny("cp -a build/.. out/..", cProt, "SRC/.. copies contents too"),
	deny("cp -r build/x/.. vendor/lib", cProt, "contents into a nested repository"),
	allow("cp -r docs .github/", "an existing directory: the tree lands at .github/docs"),
	allow("cp -r docs/. out", "contents into a directory that holds nothing protected"),
	allow("cp docs/guide.md .github/", "a file, not a tree"),
	allow("cp docs/guide.md .", "a file into the root"),
	allow("cp -r src .", "a tree into the root lands at ./src"),
	deny("cp -a -t . docs/.", cProt, "-t with SRC/.: the contents land in the root"),
	deny("cp -r --target-directory=.github build/.", cProt, "-t with SRC/. into .github"),
	allow("cp -r -t out docs/.", "-t with SRC/. into a directory holding nothing protected"),
	// A backup is the old name plus the suffix: "it" turns ".g" into ".git".
	deny("cp -b -S it x.txt src/.g", cProt, "a backup named .git (a git file that can point anywhere)"),
	deny("cp --backup=simple --suffix=nt x.txt .deponen", cProt, "a backup named .deponent"),
	deny("cp -bS IT x.txt src/.g", cProt, "case-folded"),
	deny("cp -b -S 't.' x.txt src/.gi", cProt, "a trailing dot a case-insensitive filesystem drops"),
	allow("cp -b -S .bak x.txt src/a", "an everyday suffix"),
	allow("cp --backup=numbered x.txt src/a", "numbered backups"),
)

var _ = progTable("mv",
	allow("mv x.txt y.txt", "issue 12: rename inside"),
	allow("mv src/main.py src/app.py", "inside a directory"),
	allow("mv secret old-link", "a link is moved, not what it points to"),
	deny("mv .git x", cProt, "moving .git away"),
	deny("mv .github y", cProt, "a directory holding protected paths"),
	deny("mv x.txt .git/", cProt, "into .git"),
	deny("mv x.txt ..", cEscape, "out of the sandbox"),
	deny("mv . x", cDeny, "the sandbox root"),
	deny("mv vendor/lib x", cProt, "a directory holding a nested repository"),
	deny("mv -T build .github", cProt, "-T: the moved tree becomes .github"),
	allow("mv docs .github", "an existing directory: lands at .github/docs"),
	allow("mv README.md .github", "a file into .github"),
	deny("mv -b --suffix=it x.txt src/.g", cProt, "a backup named .git"),
	allow("mv -b --suffix=.orig x.txt data.txt", "a backup beside it"),
)

var _ = progTable("rm",
	allow("rm x.txt", "issue 12: remove a file"),
	allow("rm -r build", "issue 12: -r inside the sandbox"),
	allow("rm -rf out", "forced"),
	allow("rm secret", "the link is removed, not /etc/passwd"),
	allow("'r''m' -rf build", "quote-split: still rm under its model"),
	deny("rm -rf /", cDeny, "the denylist, and outside"),
	deny("rm --recursive /", cEscape, "issue 12: --recursive is -r"),
	deny("rm --rec .", cDeny, "the sandbox root, abbreviated option"),
	deny("rm -rf .", cDeny, "the sandbox root"),
	deny("rm -r src/..", cDeny, "the root by another name"),
	deny("rm -rf ./", cDeny, "the root with a slash"),
	deny("rm -r .git", cProt, "protected"),
	deny("rm -rf .github", cProt, "holds workflows"),
	deny("rm .github/workflows/ci.yml", cProt, "a workflow"),
	deny("rm -r etc-link/", cEscape, "a trailing slash follows the link out"),
	deny("rm ../x", cEscape, "outside"),
	deny("rm --no-preserve-root -rf x", cUnsafe, "turns off rm's own guard"),
	deny("rm -r vendor/lib", cProt, "holds a nested repository's .git"),
)

// Where .github does not exist yet, a tree copied or moved to that name
// would create .github/workflows from its own workflows/ directory.
func TestTreeLandsOnProtectedAncestor(t *testing.T) {
	g := newTestGate(t, nil)
	for _, c := range []string{"cp -r src .github", "cp -R src .GitHub/", "mv src .github", "cp -a src .github", "mv -t . src/..", "cp -r src .deponent"} {
		if d := g.Decide("run_cmd", cmdParams(c)); d.Allowed() {
			t.Errorf("%q: allowed; a tree landing there could create a protected path", c)
		}
	}
	for _, c := range []string{"cp -r src docs", "mv src lib", "cp src/main.py .github", "mkdir -p .github/ISSUE_TEMPLATE"} {
		if d := g.Decide("run_cmd", cmdParams(c)); !d.Allowed() {
			t.Errorf("%q: %s", c, d.Reason)
		}
	}
}

func TestProgFileOps(t *testing.T) {
	for _, f := range []string{"cp", "mv", "rm"} {
		runProgTable(t, f)
	}
}
