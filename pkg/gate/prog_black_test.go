package gate

import "testing"

var _ = progTable("black",
	allow("black --check src", "check"),
	allow("black src", "format inside"),
	allow("black -l 100 --exclude '/migrations/' .", "a pattern option"),
	allow("black --diff src/main.py", "read"),
	deny("black .git", cProt, "formats write"),
	deny("black --config=/tmp/p.toml src", cEscape, "a config outside"),
	deny("black --chec src", cUnsafe, "click takes no abbreviations"),
	deny("black /tmp/x.py", cEscape, "outside"),
)

func TestProgBlack(t *testing.T) { runProgTable(t, "black") }
