package gate

import "testing"

var _ = progTable("python",
	allow("python3 src/main.py", "a script inside"),
	allow("python3 -c 'print(1)'", "code"),
	allow("python3 -m pytest -q", "a policy module under its model"),
	allow("python3 -u -m src.main", "the project's own module"),
	allow("python3 -m src.pkg", "the project's own package"),
	allow("python3 -Wignore -X importtime src/main.py", "options"),
	allow("python3.12 -V", "a versioned interpreter, once allowlisted").op(),
	deny("python3 -m pip install x", cDeny, "package install"),
	deny("python3 -m pip list", cDeny, "pip is a package manager; the gate has no model of it"),
	deny("python3 -mpip install x", cDeny, "glued"),
	deny("python3 -m pipenv install", cDeny, "issue 12: another package manager"),
	deny("python3 -m pdm add x", cDeny, "issue 12: another package manager"),
	deny("python3 -m mypy --install-types", cUnsafe, "issue 12: the module's model applies"),
	deny("python3 -m venv --upgrade-deps .venv", cUnsafe, "issue 12: installs from the network"),
	deny("python3 -m http.server", cNotList, "a module the policy does not list"),
	deny("python3 -I -m src.main", cNotList, "-I: the working directory is not searched, so it is not the project's module"),
	deny("python3 /tmp/x.py", cEscape, "a script outside"),
	deny("python3 src/main.py .git/config", cProt, "arguments may be written"),
	deny("python3 -X pycache_prefix=/tmp/p -c 1", cEscape, "a bytecode directory outside"),
	deny("python3 --frob", cUnsafe, "an unknown option"),
	deny("python3 -m pytest --basetemp=.", cDeny, "pytest's model under -m"),
)

var _ = progTable("json.tool",
	allow("python3 -m json.tool data.txt", "read"),
	allow("python3 -m json.tool --sort-keys data.txt out/data.json", "second operand written inside"),
	deny("python3 -m json.tool data.txt .git/x", cProt, "second operand written"),
	deny("python3 -m json.tool /tmp/x", cEscape, "input outside"),
)

var _ = progTable("venv",
	allow("python3 -m venv .venv", "an environment inside"),
	allow("python3 -m venv --clear --without-pip .venv", "options"),
	deny("python3 -m venv /tmp/venv", cEscape, "outside"),
	deny("python3 -m venv --upgrade-d .venv", cUnsafe, "abbreviated --upgrade-deps"),
	// --clear empties the directory first: it removes what is there.
	deny("python3 -m venv --clear --without-pip .github", cProt, "would delete .github/workflows"),
	deny("python3 -m venv --cle .", cDeny, "would empty the sandbox root (abbreviated --clear)"),
	deny("python3 -m venv --clear vendor/lib", cProt, "would delete a nested repository"),
	allow("python3 -m venv --without-pip .github", "without --clear only the environment's own files are written"),
)

var _ = progTable("unittest",
	allow("python3 -m unittest -v tests.test_main", "a test module"),
	allow("python3 -m unittest discover -s tests -p 'test_*.py'", "discover"),
	deny("python3 -m unittest discover -s /tmp", cEscape, "a start directory outside"),
	deny("python3 -m unittest --frob", cUnsafe, "an unknown option"),
)

var _ = progTable("py_compile",
	allow("python3 -m py_compile src/main.py", "writes bytecode beside it"),
	deny("python3 -m py_compile /tmp/x.py", cEscape, "outside"),
)

func TestProgPython(t *testing.T) {
	for _, f := range []string{"python", "json.tool", "venv", "unittest", "py_compile"} {
		runProgTable(t, f)
	}
}
