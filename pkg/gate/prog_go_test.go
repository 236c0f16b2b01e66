package gate

import (
	"os"
	"path/filepath"
	"testing"
)

var _ = progTable("go",
	allow("go test ./...", "tests").op(),
	allow("go test -run TestX -v -count=1 ./pkg/...", "selected tests").op(),
	allow("go test -coverprofile=build/cover.out ./...", "a profile inside").op(),
	allow("go build -o build/app .", "a binary inside").op(),
	allow("go vet ./...", "vet").op(),
	allow("go run . --flag x", "the program's own arguments").op(),
	allow("go env GOPATH", "read the environment").op(),
	allow("go mod tidy", "tidy").op(),
	allow("go list -m all", "list").op(),
	allow("go test ./... -args -update", "arguments for the test binary").op(),
	deny("go test -exec /bin/sh ./...", cDeny, "the denylist sees /bin/ first").op(),
	deny("go test -exec ./wrap ./...", cUnsafe, "issue 12: -exec runs a program").op(),
	deny("go build -toolexec ./x .", cUnsafe, "issue 12: -toolexec").op(),
	deny("go vet -vettool=./x ./...", cUnsafe, "runs a program").op(),
	deny("go build -overlay=o.json .", cUnsafe, "files the gate does not read").op(),
	deny("go env -w GOPROXY=off", cUnsafe, "issue 12: writes the user's go env").op(),
	deny("go env -u GOFLAGS", cUnsafe, "writes the user's go env").op(),
	deny("go build -o /tmp/x .", cEscape, "a binary outside").op(),
	deny("go test -coverprofile=.git/c ./...", cProt, "a profile into .git").op(),
	deny("go run example.com/x@latest", cNotList, "a download").op(),
	deny("go generate ./...", cNotList, "runs commands from comments").op(),
	deny("go tool compile x.go", cNotList, "a tool").op(),
	deny("go install ./...", cDeny, "package install").op(),
	deny("go mod download", cNotList, "network").op(),
	deny("go mod edit -replace=a=/tmp/x", cEscape, "a replacement outside").op(),
	deny("go build -C /tmp .", cUnsafe, "another directory").op(),
	deny("go test ./...", cNotList, "not in the default allowlist"),
	// The flags go hands its linker, compiler and assembler are read by
	// their own model: the linker's -o writes the binary anywhere (an
	// executable hook), -extld and -extldflags run other programs.
	deny("go build -ldflags=-o=.git/hooks/pre-commit .", cUnsafe, "the linker's own -o into a hook").op(),
	deny("go build -ldflags '-s -o /tmp/x' .", cUnsafe, "the linker's -o as a separate field").op(),
	deny("go build -ldflags='-linkmode=external -extld=./evil.sh' .", cUnsafe, "-extld runs a program").op(),
	deny("go build -ldflags=all=-extldflags=-B/tmp .", cUnsafe, "flags for the C linker, behind a package pattern").op(),
	deny("go test -gcflags=-cpuprofile=/tmp/p ./...", cUnsafe, "the compiler writes a profile").op(),
	deny("go build -gcflags=x.go .", cUnsafe, "an extra compiler input").op(),
	deny("go build -gccgoflags=-wrapper=id .", cUnsafe, "gcc flags are not modelled").op(),
	deny("go build -asmflags=-I=/tmp .", cEscape, "an include directory outside").op(),
	deny(`go build -ldflags="-X 'main.v=1" .`, cUnsafe, "an unterminated quote").op(),
	allow("go build -ldflags='-s -w -X main.version=1.2.3' -o build/app .", "the everyday linker flags").op(),
	allow(`go build -ldflags="-X 'main.msg=a b'" .`, "a quoted field").op(),
	allow("go test -gcflags=all=-N -gcflags=all=-l ./...", "debug builds, per pattern").op(),
	allow("go build -asmflags=-I=src .", "an include directory inside").op(),
	// go mod edit edits the go.mod it is given; go version reads binaries.
	deny("go mod edit -module=evil /tmp/go.mod", cEscape, "edits a file outside").op(),
	deny("go mod edit -fmt .git/config", cProt, "edits a protected file").op(),
	allow("go mod edit -fmt go.mod", "the sandbox's go.mod").op(),
	deny("go version -m secret", cEscape, "a binary through a link out").op(),
	allow("go version -m build", "binaries inside").op(),
	deny("go doc -http", cUnsafe, "a web server that never exits").op(),
	// go mod vendor -o removes the directory before it writes it.
	deny("go mod vendor -o .", cDeny, "would remove the sandbox root").op(),
	deny("go mod vendor -o .github", cProt, "would remove .github and its workflows").op(),
	allow("go mod vendor -o build/vendor", "a directory inside").op(),
	// go fmt rewrites the files of the packages it is given.
	deny("go fmt ./.github/actions/tool", cProt, "a protected package's files").op(),
	allow("go fmt ./...", "the tree: no protected directory here holds Go files").op(),
	allow("go doc fmt.Println", "documentation").op(),
)

func TestProgGo(t *testing.T) { runProgTable(t, "go") }

// go fmt ./... rewrites every package below, so a protected directory
// holding Go files (a composite action written in Go) is refused.
func TestGoFmtSkipsProtectedSources(t *testing.T) {
	g := newTestGate(t, mustPolicy(t, `{"extra_allow_heads": ["go"]}`))
	p := filepath.Join(g.Sandbox(), ".github", "actions", "tool", "main.go")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for c, want := range map[string]bool{"go fmt ./...": false, "go fmt ./.github/...": false, "go fmt ./src/...": true, "go vet ./...": true} {
		if d := g.Decide("run_cmd", cmdParams(c)); d.Allowed() != want {
			t.Errorf("%q: allowed %v, want %v: %s", c, d.Allowed(), want, d.Reason)
		}
	}
}
