package action

import (
	"fmt"
	"strings"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
)

// renderAgentSection is the job summary's account of the live agent: what
// ran, where, how it ended — the agent's own account, recorded beside the
// chain, never the evidence.
func renderAgentSection(a *AgentSummary) string {
	if a == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Agent\n\n")
	if a.Unjailed {
		b.WriteString("⚠️ **The agent process ran WITHOUT the agent jail** (allow-unjailed-agent)")
		if a.UnjailedReason != "" {
			b.WriteString(": " + textsafe.MarkdownCell(a.UnjailedReason, 300))
		}
		b.WriteString(". It could have written the workspace and read the runner's files directly; its tool calls were still governed.\n\n")
	}
	b.WriteString("| | |\n|---|---|\n")
	what := mdCode(a.Kind)
	if a.Command != "" {
		what += " " + textsafe.MarkdownCode(a.Command, 200)
	}
	fmt.Fprintf(&b, "| agent | %s |\n", what)
	if a.CLIVersion != "" {
		fmt.Fprintf(&b, "| CLI version | %s |\n", mdCode(a.CLIVersion))
	}
	if a.Model != "" {
		fmt.Fprintf(&b, "| model (as the CLI reported it) | %s |\n", textsafe.MarkdownCode(a.Model, 100))
	}
	jail := mdCode(a.Jail)
	if a.Unjailed {
		jail = "**none (unjailed)**"
	} else if a.Jail == "" {
		jail = "**none available — the agent was not started (fail closed)**"
	}
	fmt.Fprintf(&b, "| agent jail | %s |\n", jail)
	end := fmt.Sprintf("exit %d", a.ExitCode)
	if a.Killed != "" {
		end = "❌ **killed: " + textsafe.MarkdownCell(a.Killed, 60) + "**"
	}
	fmt.Fprintf(&b, "| ended | %s after %s |\n", end, roundDur(a.Duration))
	if a.Status != "" {
		fmt.Fprintf(&b, "| the CLI's own account | %s |\n", textsafe.MarkdownCell(a.Status, 40))
	}
	fmt.Fprintf(&b, "| tool calls | %d of at most %d |\n", a.ToolCalls, a.MaxToolCalls)
	if a.Transcript != "" {
		fmt.Fprintf(&b, "| transcript | %s (sha256 %s) |\n", mdCode(a.Transcript), mdCode(a.TranscriptSHA256))
	}
	if a.Note != "" {
		fmt.Fprintf(&b, "| CLI | %s |\n", textsafe.MarkdownCell(a.Note, 200))
	}
	if a.Detail != "" {
		fmt.Fprintf(&b, "| detail | %s |\n", textsafe.MarkdownCell(a.Detail, 500))
	}
	b.WriteString("\nThe agent's exit code and final words are recorded, not trusted: the outcome rests on the chain, the canaries and the verify-command.\n\n")
	return b.String()
}
