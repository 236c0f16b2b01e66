package gate

import "testing"

var _ = progTable("ruff",
	allow("ruff check .", "lint"),
	allow("ruff check --fix src", "fix inside"),
	allow("ruff format --check src", "check formatting"),
	allow("ruff format src", "format inside"),
	allow("ruff --config 'line-length = 100' check .", "an inline key that holds no path"),
	allow("ruff check --config 'lint.select = [\"E\"]' .", "a lint key"),
	allow("ruff check --config pyproject.toml src", "a config file inside"),
	allow("ruff rule E501", "read-only subcommand"),
	allow("python3 -m ruff check .", "as a module"),
	deny("ruff check --config \"cache-dir='/tmp/x'\" .", cUnsafe, "issue 12: an inline key that holds a path"),
	deny("ruff check --config 'src = [\"/tmp\"]' .", cUnsafe, "another path key"),
	deny("ruff check --config 'extend = \"/tmp/r.toml\"' .", cUnsafe, "a config from elsewhere"),
	deny("ruff check --config 'foo = 1' .", cUnsafe, "an unknown key"),
	deny("ruff check --config /tmp/ruff.toml .", cEscape, "a config file outside"),
	deny("ruff check --fix .git", cProt, "fixes write"),
	deny("ruff check @args.txt", cUnsafe, "an argument file"),
	deny("ruff check --watch", cUnsafe, "keeps running"),
	deny("ruff server", cNotList, "a language server"),
	deny("ruff check --output-file=/tmp/x .", cEscape, "output outside"),
	deny("ruff check --cache-dir ../c .", cEscape, "cache outside"),
	deny("ruff check --fi .", cUnsafe, "clap takes no abbreviations"),
)

func TestProgRuff(t *testing.T) { runProgTable(t, "ruff") }
