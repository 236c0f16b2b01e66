package gate

import "testing"

var _ = progTable("awk",
	allow("awk '{print $1}' data.txt", "print a field").op(),
	allow("awk -F, -v n=2 'NR<n {print $2}' data.txt", "options").op(),
	allow("awk '/a|b/ {print}' x.txt", "alternation inside a regular expression").op(),
	allow("awk '{ if ($1 > 3) print; x = a || b }' data.txt", "comparison and logical or").op(),
	allow("awk '{ print ($1 > 3) }' data.txt", "a comparison in parentheses").op(),
	allow("awk '{n++} END {print n}' x.txt v=1", "an assignment operand").op(),
	deny("awk 'BEGIN{system(\"id\")}'", cUnsafe, "issue 12: system()").op(),
	deny("awk '{print | \"sh\"}' x.txt", cUnsafe, "issue 12: a pipe to a command").op(),
	deny("awk 'BEGIN{\"id\" | getline l; print l}'", cUnsafe, "issue 12: getline from a command").op(),
	deny("awk 'BEGIN{getline l < \"x.txt\"}'", cUnsafe, "getline from a file").op(),
	deny("awk '{print > \"out.txt\"}' x.txt", cUnsafe, "print to a file").op(),
	deny("awk '{printf(\"%s\", $0) >> \"out\"}' x.txt", cUnsafe, "printf appended to a file").op(),
	deny("awk 'BEGIN{f=\"system\"; @f(\"id\")}'", cUnsafe, "an indirect call").op(),
	deny("awk -f prog.awk x.txt", cUnsafe, "a program from a file").op(),
	deny("awk -W exec prog.awk", cUnsafe, "mawk's -W").op(),
	deny("awk '{print}' /tmp/x", cEscape, "a file outside").op(),
	deny("awk 'BEGIN{print \"x\" |& \"cat\"}'", cUnsafe, "a coprocess").op(),
	deny("awk '{print}' x.txt", cNotList, "not in the default allowlist"),
	// ARGV is the list of files awk opens: changing it reads what the gate
	// never checked, however the change is spelled.
	deny(`awk 'BEGIN{ARGV[1]="/et" "c/passwd";ARGC=2}{print}'`, cUnsafe, "an assigned ARGV entry, split so no word names the path").op(),
	deny(`awk 'BEGIN{split("x secret",ARGV);ARGC=3}1'`, cUnsafe, "split() into ARGV").op(),
	deny(`awk 'function f(a){a[1]="secret"} BEGIN{f(ARGV)} 1' x.txt`, cUnsafe, "ARGV passed by reference").op(),
	deny(`awk 'BEGIN{SYMTAB["ARGV"][1]="secret"} 1' x.txt`, cUnsafe, "ARGV through gawk's SYMTAB").op(),
	allow(`awk '{print FILENAME ": " $0}' x.txt data.txt`, "the files as operands, named with FILENAME").op(),
	allow(`awk 'BEGIN{argv=1} {print argv}' x.txt`, "a variable whose name only looks like ARGV").op(),
)

func TestProgAwk(t *testing.T) { runProgTable(t, "awk") }
