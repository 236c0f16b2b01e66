package gate

import "testing"

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
)

func TestProgGo(t *testing.T) { runProgTable(t, "go") }
