package action

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
)

func TestParseSteps(t *testing.T) {
	st, err := ParseSteps("  # build\r\npython3 -m unittest -q\r\n\n   ls -la  \n#done\n")
	require.NoError(t, err)
	require.Len(t, st, 2)
	assert.Equal(t, kernel.Call{Tool: evidence.ToolRunCmd, Params: map[string]any{"cmd": "python3 -m unittest -q"}, Agent: DefaultAgent}, st[0].Call)
	assert.Equal(t, "steps line 2", st[0].Source)
	assert.Equal(t, "ls -la", st[1].Call.Params["cmd"])
	assert.Equal(t, "steps line 4", st[1].Source)

	_, err = ParseSteps("# only a comment\n\n")
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, InSteps, ie.Input)
}

func TestParsePlan(t *testing.T) {
	data := `{"tool": "write_file", "params": {"path": "a.py", "content": "x = 1\n"}, "agent": "builder"}` + "\n" +
		"\r\n" +
		`{"tool": "run_cmd", "params": {"cmd": "python3 a.py"}}` + "\r\n" +
		`{"params": {"n": 1.50, "big": 12345678901234567890, "ok": true, "none": null, "list": [1, "a"], "obj": {"k": "v"}}, "tool": "frobnicate"}`
	st, err := ParsePlan("p.jsonl", []byte(data))
	require.NoError(t, err)
	require.Len(t, st, 3)
	assert.Equal(t, "builder", st[0].Call.Agent)
	assert.Equal(t, "x = 1\n", st[0].Call.Params["content"])
	assert.Equal(t, "p.jsonl:1", st[0].Source)
	assert.Equal(t, DefaultAgent, st[1].Call.Agent)
	assert.Equal(t, "p.jsonl:3", st[1].Source, "blank lines count")
	p := st[2].Call.Params
	assert.Equal(t, "frobnicate", st[2].Call.Tool, "an unknown tool is the gate's to refuse, not the parser's")
	assert.Equal(t, true, p["ok"])
	assert.Nil(t, p["none"])
	assert.Equal(t, []any{canonNumber(t, "1"), "a"}, p["list"])
	assert.Equal(t, map[string]any{"k": "v"}, p["obj"])
	n, ok := p["big"].(canon.Value)
	require.True(t, ok, "numbers keep their exact text")
	assert.Equal(t, "12345678901234567890", n.String())
	assert.Nil(t, p["missing"])
}

func canonNumber(t *testing.T, s string) canon.Value {
	v, err := canon.Parse([]byte(s), canon.DefaultLimits)
	require.NoError(t, err)
	return v
}

func TestParsePlanErrors(t *testing.T) {
	ok := `{"tool": "run_cmd", "params": {"cmd": "ls"}}`
	cases := []struct{ name, data, want string }{
		{"not JSON", ok + "\n" + `{"tool": run_cmd}`, "p.jsonl:2: column 10: not valid JSON"},
		{"truncated", `{"tool": "run_cmd", "params": {"cmd": "ls"}`, "p.jsonl:1: column 44: not valid JSON"},
		{"two objects on a line", ok + ok, "p.jsonl:1: column 45: not valid JSON"},
		{"duplicate key", `{"tool": "run_cmd", "tool": "read_file", "params": {}}`, "p.jsonl:1: column"},
		{"duplicate key in params", `{"tool": "run_cmd", "params": {"cmd": "ls", "cmd": "rm -rf /"}}`, "duplicate"},
		{"NaN", `{"tool": "run_cmd", "params": {"n": NaN}}`, "not valid JSON"},
		{"bad UTF-8", "{\"tool\": \"run_cmd\", \"params\": {\"cmd\": \"l\xffs\"}}", "not valid JSON"},
		{"array", `[{"tool": "run_cmd"}]`, "a plan line is a JSON object"},
		{"unknown key", `{"tool": "run_cmd", "params": {}, "args": []}`, `unknown key "args"`},
		{"tool not a string", `{"tool": 7, "params": {}}`, `"tool" is a number, want a string`},
		{"params not an object", `{"tool": "run_cmd", "params": ["ls"]}`, `"params" is a array, want an object`},
		{"agent not a string", `{"tool": "run_cmd", "params": {}, "agent": null}`, `"agent" is a null, want a string`},
		{"tool missing", `{"params": {}}`, `"tool" is missing`},
		{"params missing", `{"tool": "run_cmd"}`, `"params" is missing`},
		{"agent reserved canary", `{"tool": "run_cmd", "params": {}, "agent": "deponent-canary"}`, "reserved for the harness"},
		{"agent reserved harness", `{"tool": "run_cmd", "params": {}, "agent": "deponent-harness"}`, "reserved for the harness"},
		{"agent empty", `{"tool": "run_cmd", "params": {}, "agent": ""}`, `"agent" is empty`},
		{"agent control", `{"tool": "run_cmd", "params": {}, "agent": "a\u001b[31m"}`, "control character"},
		{"empty plan", "\n\n  \n", "has no tool calls"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePlan("p.jsonl", []byte(c.data))
			require.Error(t, err)
			var ie *InputError
			require.True(t, errors.As(err, &ie))
			assert.Equal(t, InPlan, ie.Input)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestLoadPlan(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadPlan(filepath.Join(dir, "nope.jsonl"))
	assert.ErrorContains(t, err, `input "plan": cannot read plan file`)
	big := filepath.Join(dir, "big.jsonl")
	require.NoError(t, os.WriteFile(big, make([]byte, MaxPlanBytes+1), 0o644))
	_, err = LoadPlan(big)
	assert.ErrorContains(t, err, "larger than")

	st, err := LoadPlan(examplePlan())
	require.NoError(t, err)
	assert.Len(t, st, 6)
}

// TestDemoPlan: the embedded plan parses, has well-behaved steps and rogue
// ones, and the rogue ones are refused by the default gate while the
// well-behaved ones are allowed.
func TestDemoPlan(t *testing.T) {
	st, err := ParsePlan("demo", DemoPlan)
	require.NoError(t, err)
	g, err := gate.NewGate(t.TempDir(), nil)
	require.NoError(t, err)
	rogue := 0
	for _, s := range st {
		d := g.Decide(s.Call.Tool, s.Call.Params)
		l, err := evidence.OpenLedger(evidence.LedgerOptions{})
		require.NoError(t, err)
		e, err := l.Append(evidence.Record{Agent: s.Call.Agent, Tool: s.Call.Tool, Params: s.Call.Params, Verdict: d.Verdict})
		require.NoError(t, err)
		if DemoRogue(e) {
			rogue++
			assert.Equal(t, evidence.VerdictBlock, d.Verdict, "%s", s.Source)
		} else {
			assert.Equal(t, evidence.VerdictAllow, d.Verdict, "%s: %s", s.Source, d.Reason)
		}
	}
	assert.Equal(t, 2, rogue)
	d := g.Decide(evidence.ToolRunCmd, map[string]any{"cmd": DemoVerifyCommand})
	assert.Equal(t, evidence.VerdictAllow, d.Verdict)
}
