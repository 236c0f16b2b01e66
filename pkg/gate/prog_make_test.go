package gate

import "testing"

var _ = progTable("make",
	allow("make test", "a target").op(),
	allow("make -j4 -k test", "jobs").op(),
	allow("make -f Makefile PYTHON=python3 test", "a makefile inside and a variable").op(),
	allow("make -n", "dry run").op(),
	deny("make --eval='x: ; id'", cUnsafe, "issue 12: makefile text from the command line").op(),
	deny("make --ev=x", cUnsafe, "abbreviated --eval").op(),
	deny("make -E 'x:'", cUnsafe, "short --eval").op(),
	deny("make -f /tmp/Makefile", cEscape, "issue 12: a makefile outside").op(),
	deny("make -f secret", cEscape, "a makefile through a link out").op(),
	deny("make -C /tmp", cUnsafe, "another directory").op(),
	deny("make 'CC=$(shell id)'", cUnsafe, "make would expand it").op(),
	deny("make SHELL=python3 test", cUnsafe, "chooses what runs recipes").op(),
	deny("make -I /tmp test", cEscape, "include directory outside").op(),
	deny("make test", cNotList, "not in the default allowlist"),
	// VAR!=command is GNU make's shell assignment, on the command line too.
	deny(`make 'x!=touch out/pwned' all`, cUnsafe, "a != assignment runs a command").op(),
	deny(`make 'x != id' all`, cUnsafe, "with spaces").op(),
	allow(`make 'x=a!b' all`, "a ! in the value is text").op(),
)

func TestProgMake(t *testing.T) { runProgTable(t, "make") }
