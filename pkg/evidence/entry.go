package evidence

import (
	"fmt"
	"slices"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// Tool names recorded in entries. The first five are the tools an agent
// may call; the last two are the harness's own records.
const (
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolEditFile  = "edit_file"
	ToolListDir   = "list_dir"
	ToolRunCmd    = "run_cmd"
	// ToolHostCheck records what the harness observed on the host after a
	// jail canary (an escape the probe did not report).
	ToolHostCheck = "host_check"
	// ToolAgentSession records how a live agent's session ended.
	ToolAgentSession = "agent_session"
)

// AgentTools are the tools an agent's action can name.
var AgentTools = []string{ToolReadFile, ToolWriteFile, ToolEditFile, ToolListDir, ToolRunCmd}

// Entry is a ledger entry read strictly: the reference's fields and this
// implementation's extras, each checked for its type. It is what Assess
// judges and the verifier's policies read; nothing is taken from an entry
// that did not pass ReadEntry.
type Entry struct {
	Agent   string
	Tool    string
	Verdict Verdict
	Class   Class
	Reason  string

	ExitCode    *int64   // exit_code: nil when not recorded
	DurationMS  *int64   // duration_ms
	Jail        *string  // jail: nil when not recorded
	Killed      string   // killed: "" when not recorded
	Unjailed    bool     // unjailed: true
	DryRun      bool     // dry_run: true
	Error       *string  // error: nil when not recorded
	Canary      string   // canary
	Tampered    []string // tampered: protected paths the action changed
	MemoryGuard string   // memory_guard: how memory was capped ("cgroup", "rss-poll")
	TaskGuard   string   // task_guard: how tasks were capped ("cgroup", "rlimit", "poll")
	OutputBytes *int64   // output_bytes: size of the full output
	ToolCalls   *int64   // tool_calls (agent_session)
	AgentJail   string   // agent_jail (agent_session): the jail the agent process ran in
}

// Executed reports whether the action ran: allowed and not a dry run.
func (e Entry) Executed() bool { return e.Verdict == VerdictAllow && !e.DryRun }

// Succeeded reports whether an executed action succeeded: no error, not
// killed, and for commands an exit code of 0.
func (e Entry) Succeeded() bool {
	if !e.Executed() || e.Error != nil || e.Killed != "" {
		return false
	}
	if e.ExitCode != nil {
		return *e.ExitCode == 0
	}
	// File tools record no exit code; a failure records an error.
	return e.Tool != ToolRunCmd && e.Tool != ToolAgentSession
}

// Failure says why an entry did not succeed, for a reason line.
func (e Entry) Failure() string {
	switch {
	case e.Verdict == VerdictBlock:
		return fmt.Sprintf("was blocked: %s", e.Reason)
	case e.DryRun:
		return "did not execute (dry run)"
	case e.Error != nil:
		return "failed: " + *e.Error
	case e.Killed != "":
		return "was killed: " + e.Killed
	case e.ExitCode != nil:
		return fmt.Sprintf("exited %d", *e.ExitCode)
	}
	return "recorded no exit code"
}

// ReadEntry reads e strictly. Every reference field must be present with
// its type (as the chain verifier already checks); every extra field this
// implementation defines must have its type when present: a "killed" that
// is a bool, a "dry_run" that is the string "true", an "exit_code" that is
// not an integer are errors, never a default. Unknown extra fields are
// ignored (they are hashed, and judged by nothing).
func ReadEntry(e canon.Value) (Entry, error) {
	var out Entry
	if e.Kind() != canon.Object {
		return out, fmt.Errorf("entry is a %s, want an object", e.Kind())
	}
	str := func(key string, dst *string, required bool) error {
		v, ok := e.Get(key)
		if !ok {
			if required {
				return fmt.Errorf("missing field %q", key)
			}
			return nil
		}
		s, ok := v.AsString()
		if !ok {
			return fmt.Errorf("field %q is a %s, want a string", key, v.Kind())
		}
		*dst = s
		return nil
	}
	optStr := func(key string) (*string, error) {
		var s string
		if _, ok := e.Get(key); !ok {
			return nil, nil
		}
		if err := str(key, &s, false); err != nil {
			return nil, err
		}
		return &s, nil
	}
	optInt := func(key string) (*int64, error) {
		v, ok := e.Get(key)
		if !ok {
			return nil, nil
		}
		if v.Kind() != canon.Number {
			return nil, fmt.Errorf("field %q is a %s, want an integer", key, v.Kind())
		}
		n, ok := v.AsInt64()
		if !ok {
			text, _ := v.NumberText()
			return nil, fmt.Errorf("field %q is %s, want an integer", key, text)
		}
		return &n, nil
	}
	// A flag is either absent or the boolean true: a recorded false would
	// be a second way to say "not set", and any other type is a forgery's
	// way to read as "not set".
	flag := func(key string) (bool, error) {
		v, ok := e.Get(key)
		if !ok {
			return false, nil
		}
		b, isBool := v.AsBool()
		if !isBool {
			return false, fmt.Errorf("field %q is a %s, want the boolean true", key, v.Kind())
		}
		if !b {
			return false, fmt.Errorf("field %q is false; it is recorded only as true", key)
		}
		return true, nil
	}
	var verdict, class string
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{FieldAgent, &out.Agent}, {FieldTool, &out.Tool}, {FieldVerdict, &verdict}, {FieldBlastClass, &class}, {FieldReason, &out.Reason}} {
		if err := str(f.key, f.dst, true); err != nil {
			return out, err
		}
	}
	out.Verdict, out.Class = Verdict(verdict), Class(class)
	if out.Verdict != VerdictAllow && out.Verdict != VerdictBlock {
		return out, fmt.Errorf("verdict %q is neither %s nor %s", verdict, VerdictAllow, VerdictBlock)
	}
	if out.ExitCode, err = optInt(FieldExitCode); err != nil {
		return out, err
	}
	if out.DurationMS, err = optInt(FieldDurationMS); err != nil {
		return out, err
	}
	if out.ToolCalls, err = optInt(FieldToolCalls); err != nil {
		return out, err
	}
	if out.OutputBytes, err = optInt(FieldOutputBytes); err != nil {
		return out, err
	}
	if out.Jail, err = optStr(FieldJail); err != nil {
		return out, err
	}
	if out.Error, err = optStr(FieldError); err != nil {
		return out, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{FieldKilled, &out.Killed}, {FieldCanary, &out.Canary}, {FieldMemoryGuard, &out.MemoryGuard}, {FieldTaskGuard, &out.TaskGuard}, {FieldAgentJail, &out.AgentJail}} {
		if err := str(f.key, f.dst, false); err != nil {
			return out, err
		}
	}
	if _, present := e.Get(FieldKilled); present && out.Killed == "" {
		return out, fmt.Errorf("field %q is empty; it is recorded only with the reason", FieldKilled)
	}
	if out.Unjailed, err = flag(FieldUnjailed); err != nil {
		return out, err
	}
	if out.DryRun, err = flag(FieldDryRun); err != nil {
		return out, err
	}
	if v, ok := e.Get(FieldTampered); ok {
		if v.Kind() != canon.Array || len(v.Elems()) == 0 {
			return out, fmt.Errorf("field %q is a %s, want a non-empty array of paths", FieldTampered, v.Kind())
		}
		for i, p := range v.Elems() {
			s, ok := p.AsString()
			if !ok {
				return out, fmt.Errorf("field %q[%d] is a %s, want a string", FieldTampered, i, p.Kind())
			}
			out.Tampered = append(out.Tampered, s)
		}
	}
	return out, nil
}

// IsAgentTool reports whether tool is one an agent may call.
func IsAgentTool(tool string) bool { return slices.Contains(AgentTools, tool) }
