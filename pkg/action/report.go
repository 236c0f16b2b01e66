package action

import (
	"fmt"
	"io"
	"strings"

	githubactions "github.com/sethvargo/go-githubactions"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
)

// level is an annotation's severity.
type level uint8

const (
	levelNotice level = iota
	levelWarning
	levelError
)

func (l level) command() string {
	switch l {
	case levelError:
		return "error"
	case levelWarning:
		return "warning"
	}
	return "notice"
}

// reporter writes the log. Inside GitHub Actions (gh) it speaks workflow
// commands: annotations, groups, outputs and the job summary through
// go-githubactions, and it fences everything an agent controls (commands,
// paths, output) between ::stop-commands:: and the resume token, so that a
// step printing "::error::" or "::add-mask::" cannot forge a command.
// Locally it writes plain lines.
type reporter struct {
	gh     bool
	w      io.Writer
	a      *githubactions.Action
	getenv Getenv
	// annotations counts what was emitted, by level (for the demo and tests).
	annotations [3]int
}

func newReporter(w io.Writer, getenv Getenv) *reporter {
	return &reporter{
		gh:     getenv("GITHUB_ACTIONS") == "true",
		w:      w,
		a:      githubactions.New(githubactions.WithWriter(w), githubactions.WithGetenv(githubactions.GetenvFunc(getenv))),
		getenv: getenv,
	}
}

// annotate emits an ::error/::warning/::notice annotation, or a plain
// "error: …" line locally. In Actions the message keeps its line breaks
// and everything else unsafe is escaped (textsafe.Multiline); the title is
// one line (textsafe.OneLine); go-githubactions then applies the
// workflow-command rules (% CR LF in the message; also : and , in the
// title).
func (p *reporter) annotate(l level, title, msg string) {
	p.annotations[l]++
	msg = textsafe.Clip(msg, 4000)
	if !p.gh {
		fmt.Fprintf(p.w, "%s: %s\n", l.command(), textsafe.OneLine(msg))
		return
	}
	props := githubactions.CommandProperties{}
	if title != "" {
		props["title"] = textsafe.Clip(textsafe.OneLine(title), 200)
	}
	p.a.IssueCommand(&githubactions.Command{Name: l.command(), Message: textsafe.Multiline(msg), Properties: props})
}

// printf writes a line of the harness's own text (never agent-controlled
// text at the start of a line).
func (p *reporter) printf(format string, args ...any) {
	fmt.Fprintf(p.w, format+"\n", args...)
}

// group runs body inside a collapsible ::group:: whose content cannot issue
// workflow commands. Locally the title is printed as a line, and the body
// only if verbose.
func (p *reporter) group(title string, verbose bool, body func(w io.Writer)) {
	if !p.gh {
		fmt.Fprintln(p.w, textsafe.OneLine(title))
		if verbose {
			body(p.w)
		}
		return
	}
	token := p.openGroup(title)
	body(p.w)
	p.closeGroup(token)
}

// openGroup starts a ::group:: and fences what follows: until closeGroup,
// no line written can issue a workflow command (::stop-commands:: with a
// random token, which nothing the agent controls has seen). Actions only.
func (p *reporter) openGroup(title string) (token string) {
	p.a.Group(textsafe.OneLine(title))
	token = "deponent-" + randomHex(16)
	p.a.IssueCommand(&githubactions.Command{Name: "stop-commands", Message: token})
	return token
}

// closeGroup ends the fence and the group openGroup started.
func (p *reporter) closeGroup(token string) {
	p.a.IssueCommand(&githubactions.Command{Name: token})
	p.a.EndGroup()
}

// setOutput writes one step output (GITHUB_OUTPUT) or, locally, returns
// false so the caller prints it. A value with a line break is refused: the
// heredoc delimiter of go-githubactions must not be forgeable.
func (p *reporter) setOutput(name, value string) (ok bool, err error) {
	if p.getenv("GITHUB_OUTPUT") == "" {
		return false, nil
	}
	if strings.ContainsAny(value, "\r\n") {
		return false, fmt.Errorf("output %s: value contains a line break", name)
	}
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("output %s: %v", name, r)
		}
	}()
	p.a.SetOutput(name, value)
	return true, nil
}

// addSummary appends Markdown to GITHUB_STEP_SUMMARY; false when there is
// none (local runs).
func (p *reporter) addSummary(md string) (ok bool, err error) {
	if p.getenv("GITHUB_STEP_SUMMARY") == "" {
		return false, nil
	}
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("job summary: %v", r)
		}
	}()
	p.a.AddStepSummary(md)
	return true, nil
}

// tailLines returns the last n lines of out, each made printable
// (textsafe.OneLine: a byte that is not UTF-8 shows as \xNN) and cut to
// 400 characters.
func tailLines(out []byte, n int) []string {
	s := strings.TrimRight(string(out), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = textsafe.Clip(textsafe.OneLine(strings.TrimSuffix(l, "\r")), 400)
	}
	return lines
}
