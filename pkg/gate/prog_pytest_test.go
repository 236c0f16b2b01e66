package gate

import "testing"

var _ = progTable("pytest",
	allow("pytest -q", "quiet"),
	allow("pytest tests/test_main.py::test_main -vv", "a node id"),
	allow("pytest -k 'not slow' -x --tb=short tests", "selection"),
	allow("pytest --basetemp=build/tmp", "a temporary directory inside"),
	allow("pytest -o cache_dir=build/cache", "an ini value inside"),
	allow("pytest -o python_files='check_*.py'", "a pattern ini value"),
	// argparse's nargs='?' takes the next word as the value: --debug FILE
	// writes FILE, it does not run it as a test path.
	deny("pytest --debug .git/hooks/pre-commit tests", cProt, "the debug log written into a hook"),
	deny("python3 -m pytest -q --debug /tmp/log tests", cEscape, "the debug log written outside"),
	allow("pytest --debug out/debug.log tests", "the debug log inside"),
	allow("pytest --debug -q tests", "no value: the default file name"),
	allow("pytest --cache-show 'cache/*' -q", "--cache-show's glob is a pattern"),
	allow("pytest --cov=src --cov-report=html:build/cov", "coverage inside"),
	allow("pytest --cov src tests", "--cov takes the next word"),
	allow("pytest -p no:cacheprovider", "a plugin switched off"),
	allow("pytest --rootdir=.", "the sandbox as rootdir"),
	deny("pytest -o 'addopts=--basetemp .git'", cUnsafe, "issue 12: addopts hides options"),
	deny("pytest -o addopts=--rootdir /", cUnsafe, "issue 12: addopts hides options"),
	deny("pytest --override-ini=addopts=-x", cUnsafe, "long form"),
	deny("pytest -o foo=bar", cUnsafe, "an ini key the gate does not know"),
	deny("pytest -o cache_dir=/tmp/c", cEscape, "an ini path outside"),
	deny("pytest -o 'testpaths=tests /tmp'", cEscape, "a testpaths entry outside"),
	deny("pytest @args.txt", cUnsafe, "issue 12: pytest >= 8.2 reads @file"),
	deny("pytest --basetemp=.git", cProt, "pytest deletes the basetemp"),
	deny("pytest --basetemp=.", cDeny, "the sandbox root would be deleted"),
	deny("pytest --basetemp=/tmp/x", cEscape, "outside"),
	deny("pytest --rootdir=.git", cProt, "the cache would be written there"),
	deny("pytest -c .git/config", cProt, "the config's directory receives the cache"),
	deny("pytest --junitxml=/tmp/j.xml", cEscape, "a report outside"),
	deny("pytest --cov-report=xml:/tmp/c.xml", cEscape, "a coverage report outside"),
	deny("pytest --pastebin=all", cUnsafe, "uploads"),
	deny("pytest --tx popen//python=python3", cUnsafe, "other interpreters"),
	deny("pytest --basetem=x", cUnsafe, "pytest takes no abbreviations"),
)

func TestProgPytest(t *testing.T) { runProgTable(t, "pytest") }
