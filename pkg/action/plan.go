package action

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
)

// DefaultAgent is the agent name of steps, and of plan lines that name none.
const DefaultAgent = "agent"

// Plan limits: a plan is a short list of tool calls, not a data file.
const (
	MaxPlanBytes = 16 << 20
	MaxPlanCalls = 10000
	maxAgentLen  = 64
)

// Step is one agent action to run: a tool call and where it came from.
type Step struct {
	Call   kernel.Call
	Source string // "steps line 3", "plan.jsonl:4"
}

// ParseSteps turns the steps input into run_cmd calls: one per non-empty
// line; lines whose first non-blank character is # are comments.
func ParseSteps(text string) ([]Step, error) {
	var out []Step
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, Step{
			Call:   kernel.Call{Tool: evidence.ToolRunCmd, Params: map[string]any{"cmd": line}, Agent: DefaultAgent},
			Source: fmt.Sprintf("steps line %d", i+1),
		})
	}
	if len(out) == 0 {
		return nil, inputErr(InSteps, "has no commands (only blank lines and # comments); give one command per line")
	}
	if len(out) > MaxPlanCalls {
		return nil, inputErr(InSteps, "has %d commands; the limit is %d", len(out), MaxPlanCalls)
	}
	return out, nil
}

// LoadPlan reads a plan file; see ParsePlan.
func LoadPlan(path string) ([]Step, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, inputErr(InPlan, "cannot read plan file %q: %v", path, unwrapPath(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPlanBytes+1))
	if err != nil {
		return nil, inputErr(InPlan, "cannot read plan file %q: %v", path, unwrapPath(err))
	}
	if len(data) > MaxPlanBytes {
		return nil, inputErr(InPlan, "plan file %q is larger than %d bytes", path, MaxPlanBytes)
	}
	return ParsePlan(path, data)
}

// ParsePlan parses JSONL tool calls, one object per line:
//
//	{"tool": "run_cmd", "params": {"cmd": "pytest -q"}, "agent": "builder"}
//
// "tool" (a string) and "params" (an object) are required; "agent" (a
// string) is optional and defaults to DefaultAgent. Blank lines are
// skipped. Each line is parsed strictly (duplicate keys, NaN, invalid UTF-8
// and trailing data are refused); unknown keys and wrong types are errors
// that give the line and column. What the parameters hold is the gate's
// business: a malformed call is recorded as a BLOCK, not rejected here.
func ParsePlan(name string, data []byte) ([]Step, error) {
	var out []Step
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		st, err := parsePlanLine(line)
		if err != nil {
			return nil, inputErr(InPlan, "%s:%d: %v", name, lineNo, err)
		}
		st.Source = fmt.Sprintf("%s:%d", name, lineNo)
		out = append(out, st)
		if len(out) > MaxPlanCalls {
			return nil, inputErr(InPlan, "%s has more than %d tool calls", name, MaxPlanCalls)
		}
	}
	if len(out) == 0 {
		return nil, inputErr(InPlan, "%s has no tool calls (every line is blank); give one JSON object per line", name)
	}
	return out, nil
}

func parsePlanLine(line []byte) (Step, error) {
	v, err := canon.Parse(line, evidence.EntryLimits)
	if err != nil {
		var pe *canon.Error
		if errors.As(err, &pe) {
			return Step{}, fmt.Errorf("column %d: not valid JSON: %s", pe.Col, pe.Msg)
		}
		return Step{}, fmt.Errorf("not valid JSON: %v", err)
	}
	if v.Kind() != canon.Object {
		return Step{}, fmt.Errorf(`a plan line is a JSON object {"tool", "params", "agent"}, not a %s`, v.Kind())
	}
	st := Step{Call: kernel.Call{Agent: DefaultAgent}}
	seenTool, seenParams := false, false
	for _, m := range v.Members() {
		switch m.Key {
		case "tool":
			s, ok := m.Value.AsString()
			if !ok {
				return Step{}, fmt.Errorf(`"tool" is a %s, want a string such as "run_cmd"`, m.Value.Kind())
			}
			st.Call.Tool, seenTool = s, true
		case "params":
			if m.Value.Kind() != canon.Object {
				return Step{}, fmt.Errorf(`"params" is a %s, want an object such as {"cmd": "pytest -q"}`, m.Value.Kind())
			}
			st.Call.Params, seenParams = kernel.ParamsOf(m.Value), true
		case "agent":
			s, ok := m.Value.AsString()
			if !ok {
				return Step{}, fmt.Errorf(`"agent" is a %s, want a string`, m.Value.Kind())
			}
			if err := checkAgent(s); err != nil {
				return Step{}, err
			}
			st.Call.Agent = s
		default:
			return Step{}, fmt.Errorf(`unknown key %q: a plan line has only "tool", "params" and "agent"`, m.Key)
		}
	}
	if !seenTool {
		return Step{}, errors.New(`"tool" is missing`)
	}
	if !seenParams {
		return Step{}, errors.New(`"params" is missing (use {} for a tool without parameters)`)
	}
	return st, nil
}

// checkAgent refuses the harness's own names — a plan may not speak as the
// canaries or the out-of-band check — and names a reviewer cannot read.
func checkAgent(s string) error {
	switch {
	case s == "":
		return errors.New(`"agent" is empty; omit it for the default "agent"`)
	case s == evidence.AgentCanary || s == evidence.AgentHarness:
		return fmt.Errorf(`"agent" %q is reserved for the harness; a plan cannot act as the canaries or the out-of-band check`, s)
	case len(s) > maxAgentLen:
		return fmt.Errorf(`"agent" is longer than %d bytes`, maxAgentLen)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return errors.New(`"agent" contains a control character`)
		}
	}
	return nil
}
