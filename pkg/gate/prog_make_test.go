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
)

func TestProgMake(t *testing.T) { runProgTable(t, "make") }
