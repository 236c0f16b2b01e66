package gate

import "testing"

var _ = progTable("find",
	allow("find . -name '*.py'", "issue 12: find by name"),
	allow("find src tests -type f -name '*.py' -print", "several roots"),
	allow("find . -maxdepth 2 -type d -not -path './.git/*'", "depth and negation"),
	allow("find . -newer x.txt", "a reference file inside"),
	allow("find -H lnk -name '*.py'", "-H follows the named root only"),
	allow("find . -regex '.*/etc/.*'", "a pattern that names /etc/ is not a path"),
	allow("find . -newermt '2024-01-01'", "-newerXY with a date"),
	deny("find / -name x", cEscape, "a root outside"),
	deny("find etc-link -name x", cEscape, "a root through a link out"),
	deny("find . -exec cat {} ;", cUnsafe, "runs a program"),
	deny("find . -execdir sh ;", cUnsafe, "runs a program"),
	deny("find . -ok rm {} ;", cUnsafe, "runs a program"),
	deny("find . -okdir rm {} ;", cUnsafe, "runs a program"),
	deny("find . -delete", cUnsafe, "deletes"),
	deny("find . -fprint out.txt", cUnsafe, "writes a file"),
	deny("find . -fprint0 out.txt", cUnsafe, "writes a file"),
	deny("find . -fprintf out.txt %p", cUnsafe, "writes a file"),
	deny("find . -fls out.txt", cUnsafe, "writes a file"),
	deny("find -L . -name x", cUnsafe, "follows links out"),
	deny("find . -follow", cUnsafe, "follows links out"),
	deny("find . -newer secret", cEscape, "a reference through a link out"),
	deny("find . -newerma ../x", cEscape, "-newerXY with a file outside"),
	deny("find . -name x ../", cUnsafe, "a path after the expression"),
	deny("find . -frobnicate", cUnsafe, "an unknown primary"),
	deny("find . -files0-from list", cUnsafe, "roots from a file"),
)

func TestProgFind(t *testing.T) { runProgTable(t, "find") }
