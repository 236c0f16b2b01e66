package gate

import "testing"

var _ = progTable("mypy",
	allow("mypy src", "check"),
	allow("mypy --strict --show-error-codes --no-error-summary src", "flags and their negations"),
	allow("mypy --config-file pyproject.toml --cache-dir build/mypy src", "paths inside"),
	allow("mypy --exclude '/migrations/' src", "a pattern"),
	allow("mypy --ignore-missing src", "an unambiguous prefix"),
	deny("mypy @args.txt", cUnsafe, "issue 12: an argument file"),
	deny("mypy --install-types src", cUnsafe, "installs packages"),
	deny("mypy --install src", cUnsafe, "abbreviated"),
	deny("mypy --python-executable=./x src", cUnsafe, "runs a program"),
	deny("mypy --python-exec ./x src", cUnsafe, "abbreviated"),
	deny("mypy --cache-dir=/tmp/m src", cEscape, "outside"),
	deny("mypy --html-report /tmp/r src", cEscape, "a report outside"),
	deny("mypy --no src", cUnsafe, "ambiguous"),
)

func TestProgMypy(t *testing.T) { runProgTable(t, "mypy") }
