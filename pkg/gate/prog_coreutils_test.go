package gate

import "testing"

var _ = progTable("cat",
	allow("cat README.md src/main.py", "files inside"),
	allow("cat -n .git/config", "a protected path may be read"),
	allow("cat --number --show-ends x.txt", "long options"),
	allow("cat --show-e x.txt", "an unambiguous prefix of --show-ends"),
	deny("cat --num x.txt", cUnsafe, "ambiguous: --number or --number-nonblank"),
	deny("cat secret", cEscape, "a symlink out"),
	deny("cat x.txt -- /tmp/x", cEscape, "after --"),
	deny("cat --frobnicate x.txt", cUnsafe, "an option cat does not have"),
	deny("cat x.txt -n ../x", cEscape, "options after operands are still options, and operands are still files"),
)

var _ = progTable("head",
	allow("head -n 5 README.md", "a count"),
	allow("head -5 src/main.py", "the -NUM form"),
	allow("head --lines=3 x.txt data.txt", "long option with value"),
	allow("head -c 10 x.txt", "bytes"),
	deny("head -n 5 /tmp/x", cEscape, "a file outside"),
	deny("head --lines 3 secret", cEscape, "the value is taken, the next word is a file"),
)

var _ = progTable("tail",
	allow("tail -n 20 x.txt", "a count"),
	allow("tail -n +2 data.txt", "from a line"),
	deny("tail -f x.txt", cUnsafe, "follow forever"),
	deny("tail --fol x.txt", cUnsafe, "--follow abbreviated"),
	deny("tail -F x.txt", cUnsafe, "follow by name"),
	deny("tail -n 1 etc-link/passwd", cEscape, "through a link out"),
	// GNU tail reads a lone first argument "+N[bcl][f]" or "-[N][bcl]f"
	// as its obsolete option before getopt ever runs: "-cf" is not -c with
	// the value "f", it is "last 10 bytes, and follow".
	deny("tail +1f x.txt", cUnsafe, "obsolete follow from line 1"),
	deny("tail +f x.txt", cUnsafe, "obsolete follow, default count"),
	deny("tail -cf x.txt", cUnsafe, "obsolete follow in bytes, not -c with value f"),
	deny("tail +5cf x.txt", cUnsafe, "obsolete follow with a unit"),
	deny("tail -lf", cUnsafe, "obsolete follow of standard input"),
	allow("tail +5 x.txt", "obsolete count from line 5: no follow"),
	allow("tail -5 x.txt", "obsolete count"),
	allow("tail -- +1f", "after --, +1f is a file name"),
)

var _ = progTable("wc",
	allow("wc -l src/main.py", "lines"),
	allow("wc --lines x.txt", "long option"),
	deny("wc --files0-from=x.txt", cUnsafe, "names from a file"),
	deny("wc --f=list", cUnsafe, "issue 12: --f is --files0-from (the only option starting with f)"),
	deny("wc --files0=x", cUnsafe, "abbreviated"),
	deny("wc -l secret", cEscape, "a link out"),
)

var _ = progTable("sort",
	allow("sort -u data.txt", "unique"),
	allow("sort -o data.txt data.txt", "sorted in place"),
	allow("sort -t, -k2 -n data.txt", "keys"),
	allow("sort -T build data.txt", "temporary files in the sandbox"),
	deny("sort -o /tmp/x data.txt", cEscape, "output outside"),
	deny("sort -o.git/config data.txt", cProt, "glued output into .git"),
	deny("sort --compress-program=sh data.txt", cUnsafe, "runs a program"),
	deny("sort --compress=sh data.txt", cUnsafe, "abbreviated"),
	deny("sort -T /tmp data.txt", cEscape, "temporary files outside"),
	deny("sort --random-source=/dev/urandom data.txt", cDeny, "a device (the denylist's /dev/)"),
)

var _ = progTable("uniq",
	allow("uniq -c data.txt", "count"),
	allow("uniq data.txt out/uniq.txt", "second operand written inside"),
	deny("uniq data.txt .git/hooks/pre-commit", cProt, "second operand is written"),
	deny("uniq /tmp/x", cEscape, "input outside"),
	// uniq reads "+N" as its obsolete skip-chars option wherever it
	// stands, so the operand after it is the one written.
	deny("uniq +1 data.txt .git/hooks/pre-commit", cUnsafe, "+N is an option: the hook is the output file"),
	deny("uniq data.txt +0 .github/workflows/ci.yml", cUnsafe, "+N between operands"),
	allow("uniq -s 1 data.txt out/uniq.txt", "skip chars spelled as an option"),
	allow("uniq data.txt ./+1", "a file named +1, written with ./"),
)

var _ = progTable("diff",
	allow("diff -u x.txt data.txt", "unified"),
	allow("diff -r src tests", "recursive"),
	allow("diff -I '^#' -x '*.pyc' x.txt data.txt", "patterns are not paths"),
	deny("diff x.txt ../x", cEscape, "outside"),
	deny("diff -l x.txt data.txt", cUnsafe, "runs pr"),
	deny("diff --from-file=/tmp/x x.txt", cEscape, "a read option outside"),
)

var _ = progTable("ls",
	allow("ls -la src", "listing"),
	allow("ls -R --ignore='*.pyc' .", "a pattern"),
	allow("ls -H lnk", "a link inside"),
	deny("ls -L .", cUnsafe, "follows links"),
	deny("ls --deref .", cUnsafe, "abbreviated --dereference"),
	deny("ls etc-link", cEscape, "a link out"),
)

var _ = progTable("echo",
	allow("echo ../.. /", "text, not paths"),
	allow("echo -n 'a b'", "options are text too"),
	deny("echo curl", cDeny, "the denylist reads echo's words"),
	deny("echo *", cEscape, "a glob match that leads out"),
)

var _ = progTable("printf",
	allow("printf '%s\\n' a b", "a format and its arguments").op(),
	deny("printf -v PATH x", cUnsafe, "bash's printf -v assigns a variable").op(),
	deny("printf x", cNotList, "not in the default allowlist"),
)

var _ = progTable("pwd",
	allow("pwd", "prints"),
	allow("pwd -P", "physical"),
	deny("pwd --frob", cUnsafe, "unknown option"),
)

var _ = progTable("true",
	allow("true", "nothing"),
	allow("false x", "arguments ignored").op(),
	deny("true && curl x", cDeny, "the chain is read"),
)

var _ = progTable("which",
	allow("which python3", "a name"),
	allow("which -a curl", "a name, not a download: which's operands are patterns"),
	deny("which --all python3", cUnsafe, "no long options in the model"),
)

var _ = progTable("mkdir",
	allow("mkdir -p build/out/deep", "inside"),
	allow("mkdir -m 755 out/x", "a mode"),
	deny("mkdir -p .git/hooks", cProt, "protected"),
	deny("mkdir tmp-link/x", cEscape, "through a link out"),
	deny("mkdir --mode=755 /tmp/x", cEscape, "outside"),
)

var _ = progTable("touch",
	allow("touch new.txt src/__init__.py", "inside"),
	allow("touch -r x.txt data.txt", "reference read"),
	deny("touch .git/hooks/pre-commit", cProt, "a hook"),
	deny("touch -r secret x.txt", cEscape, "reference through a link out"),
	deny("touch .GIT/config", cProt, "case-folded .git"),
)

var _ = progTable("tee",
	allow("tee out.txt", "inside").op(),
	allow("tee -a build/log.txt", "append inside").op(),
	deny("tee /tmp/x", cEscape, "outside").op(),
	deny("tee .github/workflows/x.yml", cProt, "a workflow").op(),
	deny("tee out.txt", cNotList, "not in the default allowlist"),
)

func TestProgCoreutils(t *testing.T) {
	for _, f := range []string{"cat", "head", "tail", "wc", "sort", "uniq", "diff", "ls", "echo", "printf", "pwd", "true", "which", "mkdir", "touch", "tee"} {
		runProgTable(t, f)
	}
}
