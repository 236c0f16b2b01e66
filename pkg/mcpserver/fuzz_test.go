package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseArguments: a call's arguments come from the agent, untrusted.
// Parsing never panics; what is accepted is a JSON object Go's decoder
// reads the same way (same keys), and what is refused keeps the raw text
// for the record.
func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{`{"cmd": "ls"}`, `{"cmd": "ls", "cmd": "x"}`, `[1]`, `"x"`, ``, `null`, `{"a": {"b": [1, 2.5e3, null, true]}}`,
		"{\"p\": \"\xff\"}", `{"p": "\ud800"}`, `{`, `{"a":1} {"b":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		params, err := parseArguments(raw)
		if params == nil {
			t.Fatal("params is nil")
		}
		if err != nil {
			if _, ok := params["arguments"]; !ok {
				t.Fatalf("refused arguments %q are not kept for the record", raw)
			}
			return
		}
		if t := strings.Trim(string(raw), " \t\r\n"); t == "" || t == "null" {
			return // no arguments: {}
		}
		var m map[string]any
		if jerr := json.Unmarshal(raw, &m); jerr != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", raw, jerr)
		}
		if len(m) != len(params) {
			t.Fatalf("accepted %q with %d keys, encoding/json reads %d", raw, len(params), len(m))
		}
	})
}
