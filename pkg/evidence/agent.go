package evidence

import (
	"fmt"
	"slices"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// RFieldAgent is the receipt's signed "agent" object: what the harness
// knows about the live agent it ran. Like the agent's exit code and words,
// it is testimony, never a verdict: the outcome rests on the chain.
const RFieldAgent = "agent"

// AgentSchema tags the "agent" object.
const AgentSchema = "deponent-agent/v1"

// ClassAgentSession is the blast class of the harness's agent_session
// entry: the agent process ran (in the agent jail, with the network).
const ClassAgentSession Class = "agent-session"

// FieldAgentJail is the agent_session entry's agent jail ("bwrap",
// "seatbelt", or "none" when the agent ran unjailed by the explicit
// opt-out). It is not "jail", which names the tools' jail of a command.
const FieldAgentJail = "agent_jail"

// AgentRecord is the "agent" object.
type AgentRecord struct {
	Kind       string // claude, codex or command (Governance.Agent)
	Command    string // agent-command's command line; "" for a preset
	CLIVersion string // the CLI's version as it reported it; "" when unknown
	Model      string // the model the CLI reported; "" when it did not
	ExitCode   int64  // -1 when killed or never started
	Killed     string // "" or why the harness stopped it (agent-timeout, tool-call-limit, no-jail, ...)
	DurationMS int64
	ToolCalls  int64 // tools/call requests the governed session received
	// TranscriptSHA256 is the sha256 of the agent's output (its event
	// stream), kept beside the receipt as file Transcript.
	TranscriptSHA256 string
	Transcript       string
	Jail             string // the agent jail: bwrap, seatbelt, or none
	Unjailed         bool   // allow-unjailed-agent: the agent process ran without an agent jail
	Status           string // the CLI's own account: completed, failed, incomplete; "" for a command
	MaxToolCalls     int64
	TimeoutMS        int64
	Env              []string // agent-env: names only, never values
}

// agent object field names and kinds.
const (
	agSchema       = "schema"
	agKind         = "kind"
	agCommand      = "command"
	agCLIVersion   = "cli_version"
	agModel        = "model"
	agExitCode     = "exit_code"
	agKilled       = "killed"
	agDurationMS   = "duration_ms"
	agToolCalls    = "tool_calls"
	agTranscriptSH = "transcript_sha256"
	agTranscript   = "transcript"
	agJail         = "jail"
	agUnjailed     = "unjailed"
	agStatus       = "status"
	agMaxToolCalls = "max_tool_calls"
	agTimeoutMS    = "timeout_ms"
	agEnv          = "env"
)

var agentFields = map[string]canon.Kind{
	agSchema: canon.String, agKind: canon.String, agCommand: canon.String, agCLIVersion: canon.String,
	agModel: canon.String, agExitCode: canon.Number, agKilled: canon.String, agDurationMS: canon.Number,
	agToolCalls: canon.Number, agTranscriptSH: canon.String, agTranscript: canon.String, agJail: canon.String,
	agUnjailed: canon.Bool, agStatus: canon.String, agMaxToolCalls: canon.Number, agTimeoutMS: canon.Number,
	agEnv: canon.Array,
}

// Value renders a as the receipt's "agent" object.
func (a AgentRecord) Value() canon.Value {
	env := make([]canon.Value, 0, len(a.Env))
	for _, e := range a.Env {
		env = append(env, canon.Str(e))
	}
	return canon.Obj(
		canon.M(agSchema, canon.Str(AgentSchema)),
		canon.M(agKind, canon.Str(a.Kind)),
		canon.M(agCommand, canon.Str(a.Command)),
		canon.M(agCLIVersion, canon.Str(a.CLIVersion)),
		canon.M(agModel, canon.Str(a.Model)),
		canon.M(agExitCode, canon.Int(a.ExitCode)),
		canon.M(agKilled, canon.Str(a.Killed)),
		canon.M(agDurationMS, canon.Int(a.DurationMS)),
		canon.M(agToolCalls, canon.Int(a.ToolCalls)),
		canon.M(agTranscriptSH, canon.Str(a.TranscriptSHA256)),
		canon.M(agTranscript, canon.Str(a.Transcript)),
		canon.M(agJail, canon.Str(a.Jail)),
		canon.M(agUnjailed, canon.BoolValue(a.Unjailed)),
		canon.M(agStatus, canon.Str(a.Status)),
		canon.M(agMaxToolCalls, canon.Int(a.MaxToolCalls)),
		canon.M(agTimeoutMS, canon.Int(a.TimeoutMS)),
		canon.M(agEnv, canon.Arr(env...)),
	)
}

// ParseAgentRecord reads a receipt's "agent" object strictly: present is
// false when the receipt has none; an error for a schema other than
// AgentSchema, a missing or unknown field, a field of the wrong type, a
// number that is not an integer, or a kind that is not claude, codex or
// command.
func ParseAgentRecord(body canon.Value) (a AgentRecord, present bool, err error) {
	v, present := body.Get(RFieldAgent)
	if !present {
		return a, false, nil
	}
	if v.Kind() != canon.Object {
		return a, true, fmt.Errorf("agent is a %s, want an object", v.Kind())
	}
	for _, m := range v.Members() {
		kind, known := agentFields[m.Key]
		if !known {
			return a, true, fmt.Errorf("agent holds unknown field %q", m.Key)
		}
		if m.Value.Kind() != kind {
			return a, true, fmt.Errorf("agent.%s is a %s, want a %s", m.Key, m.Value.Kind(), kind)
		}
		if kind == canon.Number {
			if _, ok := m.Value.AsInt64(); !ok {
				return a, true, fmt.Errorf("agent.%s is %s, want an integer", m.Key, m.Value.String())
			}
		}
	}
	for k := range agentFields {
		if _, ok := v.Get(k); !ok {
			return a, true, fmt.Errorf("agent.%s is missing", k)
		}
	}
	if s := EntryString(v, agSchema); s != AgentSchema {
		return a, true, fmt.Errorf("agent.schema is %q, this reader knows %q only", s, AgentSchema)
	}
	num := func(k string) int64 { x, _ := v.Get(k); n, _ := x.AsInt64(); return n }
	a = AgentRecord{
		Kind: EntryString(v, agKind), Command: EntryString(v, agCommand), CLIVersion: EntryString(v, agCLIVersion),
		Model: EntryString(v, agModel), ExitCode: num(agExitCode), Killed: EntryString(v, agKilled),
		DurationMS: num(agDurationMS), ToolCalls: num(agToolCalls), TranscriptSHA256: EntryString(v, agTranscriptSH),
		Transcript: EntryString(v, agTranscript), Jail: EntryString(v, agJail), Unjailed: EntryBool(v, agUnjailed),
		Status: EntryString(v, agStatus), MaxToolCalls: num(agMaxToolCalls), TimeoutMS: num(agTimeoutMS),
	}
	envv, _ := v.Get(agEnv)
	for i, e := range envv.Elems() {
		s, ok := e.AsString()
		if !ok {
			return a, true, fmt.Errorf("agent.env[%d] is a %s, want a string", i, e.Kind())
		}
		a.Env = append(a.Env, s)
	}
	switch a.Kind {
	case "claude", "codex", "command":
	default:
		return a, true, fmt.Errorf("agent.kind is %q, want claude, codex or command", a.Kind)
	}
	if (a.Kind == "command") != (a.Command != "") {
		return a, true, fmt.Errorf("agent.command must be set exactly for kind command (kind %q, command %q)", a.Kind, a.Command)
	}
	if a.Unjailed != (a.Jail == "none") {
		return a, true, fmt.Errorf("agent.unjailed is %t but agent.jail is %q", a.Unjailed, a.Jail)
	}
	return a, true, nil
}

// CheckAgentRecord lists every way a receipt's "agent" object disagrees
// with its governance (which names the agent) and with the one
// agent_session entry of its chain (exit code, duration, tool calls, kill,
// agent jail, and the transcript's hash as the entry's outcome). A receipt
// whose governance names an agent must carry the object; one whose
// governance names none must not. Nil means they agree (or neither has an
// agent).
func CheckAgentRecord(body canon.Value, entries []canon.Value, g Governance) []string {
	a, present, err := ParseAgentRecord(body)
	switch {
	case err != nil:
		return []string{err.Error()}
	case !present && g.Agent == "":
		return nil
	case !present:
		return []string{fmt.Sprintf("the governance names agent %q but the receipt has no agent object", g.Agent)}
	case g.Agent != a.Kind:
		return []string{fmt.Sprintf("agent.kind is %q but the governance names agent %q", a.Kind, g.Agent)}
	}
	var session []canon.Value
	for _, e := range entries {
		if EntryString(e, FieldAgent) == AgentHarness && EntryString(e, FieldTool) == ToolAgentSession {
			session = append(session, e)
		}
	}
	if len(session) != 1 {
		return []string{fmt.Sprintf("the chain holds %d agent_session entries, want 1", len(session))}
	}
	e := session[0]
	var diffs []string
	intField := func(k string) (int64, bool) {
		v, ok := e.Get(k)
		if !ok {
			return 0, false
		}
		return v.AsInt64()
	}
	for _, c := range []struct {
		key  string
		want int64
	}{{FieldExitCode, a.ExitCode}, {FieldDurationMS, a.DurationMS}, {FieldToolCalls, a.ToolCalls}} {
		if got, ok := intField(c.key); !ok || got != c.want {
			diffs = append(diffs, fmt.Sprintf("agent_session.%s is %s, the agent object says %d", c.key, showField(e, c.key), c.want))
		}
	}
	if got := EntryString(e, FieldKilled); got != a.Killed {
		diffs = append(diffs, fmt.Sprintf("agent_session.killed is %q, the agent object says %q", got, a.Killed))
	}
	if got := EntryString(e, FieldAgentJail); got != a.Jail {
		diffs = append(diffs, fmt.Sprintf("agent_session.agent_jail is %q, the agent object says %q", got, a.Jail))
	}
	if got := EntryString(e, FieldOutcomeSHA256); got != a.TranscriptSHA256 {
		diffs = append(diffs, fmt.Sprintf("agent_session.outcome_sha256 is %q, the agent object's transcript_sha256 is %q", got, a.TranscriptSHA256))
	}
	params, _ := e.Get(FieldParams)
	if got := EntryString(params, "agent"); got != a.Kind {
		diffs = append(diffs, fmt.Sprintf("agent_session.params.agent is %q, the agent object says %q", got, a.Kind))
	}
	if v := EntryString(e, FieldVerdict); v != string(VerdictAllow) {
		diffs = append(diffs, fmt.Sprintf("agent_session.verdict is %q, want ALLOW", v))
	}
	if slices.ContainsFunc(a.Env, func(s string) bool { return s == "" }) {
		diffs = append(diffs, "agent.env holds an empty name")
	}
	return diffs
}

func showField(e canon.Value, k string) string {
	v, ok := e.Get(k)
	if !ok {
		return "missing"
	}
	return v.String()
}
