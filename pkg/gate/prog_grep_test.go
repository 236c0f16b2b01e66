package gate

import "testing"

var _ = progTable("grep",
	allow("grep -rn TODO .", "search"),
	allow("grep -rn sudo .", "issue 12: a denylist word inside a search pattern"),
	allow(`grep -rn "/etc/hosts" .`, "issue 12: a system path inside a search pattern"),
	allow(`grep -n "strip()$" src/main.py`, "issue 12: $ at the end of a quoted regex"),
	allow(`grep -rn "/api/" src`, "issue 12: a regex that looks like an absolute path"),
	allow("grep -rn --exclude '/migrations/' foo .", "issue 12: a regex option value is not a path"),
	allow("grep -rn --include='*.py' -e curl src", "-e pattern, --include glob"),
	allow("grep -e /usr -e ../x x.txt", "-e values are patterns"),
	allow("grep -A 3 /x x.txt", "-A takes its value, then the pattern"),
	allow("grep -5 /x x.txt", "-NUM context"),
	allow("egrep 'a|b' x.txt", "egrep").op(),
	deny("grep --rege=root secret", cEscape, "issue 12: --rege is --regexp, so secret is a file"),
	deny("grep --regex=root secret", cEscape, "issue 12: --regex is --regexp"),
	deny("grep --reg=root secret", cEscape, "issue 12: --reg is --regexp"),
	deny("grep -e x /tmp/y", cEscape, "with -e every operand is a file"),
	deny("grep /x /tmp/y", cEscape, "the second operand is a file"),
	deny("grep -C /x /tmp", cEscape, "BSD grep's -C takes no separate value: /tmp is a file there"),
	deny("grep -X /x x.txt", cUnsafe, "undocumented matcher option"),
	deny("grep --colr /x x.txt", cUnsafe, "not an option"),
	deny("grep -R x .", cUnsafe, "follows links out"),
	deny("grep --dereference-rec x .", cUnsafe, "abbreviated -R"),
	deny("grep -f secret x.txt", cEscape, "pattern file through a link out"),
	deny("grep x x.txt -f secret", cEscape, "an option after the operands"),
	deny("grep --exclude-from=/tmp/x foo .", cEscape, "a file of patterns outside"),
	deny("grep -rn sudo /etc/", cDeny, "the path operand is still read by the denylist"),
	deny("grep -rn sudo ../..", cEscape, "and path-checked"),
)

func TestProgGrep(t *testing.T) { runProgTable(t, "grep") }
