package mcpserver

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
)

// result renders what the Cell did as the tool's result. A refusal is a
// tool error that says what was refused, why, and what to do instead; an
// allowed action that failed is a tool error with the reason; a command
// that ran is a normal result whatever its exit code (a failing test run is
// a result the agent needs, not an error of the tool).
func (s *Server) result(tool string, res kernel.ActResult) *mcp.CallToolResult {
	d := res.Decision
	if d.Verdict != evidence.VerdictAllow {
		return errorResult(blockText(tool, d.BlastClass, d.Reason))
	}
	if s.opt.DryRun && !res.Executed && res.Err == nil {
		return textResult(fmt.Sprintf("ALLOWED (dry run): this %s call was gated and recorded but NOT executed; nothing changed and there is no output.", tool))
	}
	switch tool {
	case evidence.ToolRunCmd:
		if res.Err != nil && res.Killed == "" && res.ExitCode == -1 && len(res.Output) == 0 {
			return errorResult(fmt.Sprintf("The command was allowed but could not be run: %v. It is recorded.", res.Err))
		}
		return textResult(s.commandText(res))
	case evidence.ToolReadFile, evidence.ToolListDir:
		if res.Err != nil {
			return errorResult(fmt.Sprintf("%v (recorded; nothing was changed)", res.Err))
		}
		return textResult(toValidUTF8(res.Output))
	case evidence.ToolWriteFile, evidence.ToolEditFile:
		if res.Err != nil {
			return errorResult(fmt.Sprintf("%v (recorded)", res.Err))
		}
		verb := "written"
		if tool == evidence.ToolEditFile {
			verb = "edited (exactly one occurrence replaced)"
		}
		return textResult(fmt.Sprintf("OK: %s %s.", pathOf(res), verb))
	}
	if res.Err != nil {
		return errorResult(res.Err.Error())
	}
	return textResult("OK")
}

// commandText is a command's exit code, why it was stopped, and the tail of
// its output (stdout and stderr interleaved), with a note when cut.
func (s *Server) commandText(res kernel.ActResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit code: %d\n", res.ExitCode)
	if res.Killed != "" {
		fmt.Fprintf(&b, "killed: %s (the sandbox stopped the command at a resource limit)\n", res.Killed)
	}
	if res.Err != nil {
		fmt.Fprintf(&b, "error: %v\n", res.Err)
	}
	out := res.Output
	total := res.OutputBytes
	if total < int64(len(out)) {
		total = int64(len(out))
	}
	if len(out) > s.opt.TailBytes {
		out = out[len(out)-s.opt.TailBytes:]
		// Start at a character boundary.
		for i := 0; i < 4 && len(out) > 0 && !utf8.RuneStart(out[0]); i++ {
			out = out[1:]
		}
	}
	switch {
	case total == 0:
		b.WriteString("output: (none)\n")
	case int64(len(out)) < total:
		fmt.Fprintf(&b, "output (the last %d of %d bytes; the earlier output was cut — rerun with a narrower command, e.g. piping to tail or grep, to see a part of it):\n", len(out), total)
	default:
		b.WriteString("output:\n")
	}
	b.WriteString(toValidUTF8(out))
	return b.String()
}

// blockText is a refusal written so that an agent can change course: the
// verdict, the class and the reason, what is refused in general, and that
// retrying the same call will not help.
func blockText(tool string, class evidence.Class, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "BLOCKED by Deponent (verdict BLOCK, class %s): %s\n", class, reason)
	fmt.Fprintf(&b, "This %s call was not executed; the refusal is recorded in the run's ledger. ", orUnknown(tool))
	b.WriteString("Retrying the same call will be refused again. ")
	b.WriteString(advice(class))
	return b.String()
}

func orUnknown(tool string) string {
	if tool == "" {
		return "(unnamed)"
	}
	return tool
}

// advice says what to do instead, by class.
func advice(class evidence.Class) string {
	switch class {
	case evidence.ClassToolCallLimit:
		return "The tool-call limit is reached: no further tool call will run. Stop now and give your final answer."
	case evidence.ClassMalformed:
		return "Send the tool's parameters exactly as its input schema lists them: every required key, each a string, no other key."
	case evidence.ClassUnknownTool:
		return "Use only this server's tools: run_cmd, read_file, write_file, edit_file, list_dir."
	case evidence.ClassOutOfSandboxRead, evidence.ClassOutOfSandboxWrite, evidence.ClassArgPathEscape:
		return "Use paths relative to the workspace root, inside it (no absolute paths, no .. that leaves it, no symlink out of it)."
	case evidence.ClassProtectedPath:
		return "Protected paths (.git and the policy's protected list) are read-only for you; change the project's own files instead."
	case evidence.ClassNoJail:
		return "Commands cannot run here because no sandbox is available; use the file tools, and report that commands were refused."
	case evidence.ClassNotAllowlisted:
		return "Only the policy's allowlisted programs run; use one of them (see run_cmd's description) or the file tools."
	case evidence.ClassDestructive:
		return "Destructive, privileged and network commands are refused; there is no network access. Work with the files in the workspace."
	case evidence.ClassRedirect, evidence.ClassSubstitution, evidence.ClassBackground, evidence.ClassShellConstruct, evidence.ClassEnvAssignment:
		return "Use a plain command line (programs, arguments, pipes, && and ||); write files with write_file or edit_file, not with shell redirection."
	}
	return "Change the call (see the tool's description for the rules), or use another tool."
}

func pathOf(res kernel.ActResult) string {
	if res.Decision.Path != "" {
		return res.Decision.Path
	}
	return "the file"
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func errorResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// toValidUTF8 shows bytes as text; invalid UTF-8 (binary output) becomes
// U+FFFD. The ledger's outcome hash covers the bytes, not this rendering.
func toValidUTF8(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
