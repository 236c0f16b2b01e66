package mcpserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Tools are the five tools, in the order they are listed.
var Tools = []string{evidence.ToolRunCmd, evidence.ToolReadFile, evidence.ToolWriteFile, evidence.ToolEditFile, evidence.ToolListDir}

func isTool(name string) bool { return slices.Contains(Tools, name) }

// schema is an input schema: an object with exactly these string
// properties, all required, nothing else. The server does not rely on the
// client honouring it: the gate checks every key and type again, and a
// call that breaks it is refused and recorded.
func schema(props ...[2]string) map[string]any {
	p := map[string]any{}
	req := []string{}
	for _, kv := range props {
		p[kv[0]] = map[string]any{"type": "string", "description": kv[1]}
		req = append(req, kv[0])
	}
	return map[string]any{"type": "object", "properties": p, "required": req, "additionalProperties": false}
}

func ptr(b bool) *bool { return &b }

// rules is the part every description repeats: an agent often reads only
// the tool it is about to use.
const rules = "Paths are relative to the workspace root (the current directory of commands); " +
	"absolute paths, paths that leave the workspace, and writes to protected paths (.git and the " +
	"policy's protected list) are refused. Every call, allowed or refused, is recorded in a " +
	"hash-chained ledger; a refused call is not executed."

func (s *Server) tools() []*mcp.Tool {
	pol := s.opt.Cell.Gate().Policy()
	lim := pol.Limits()
	cpu, fsize, mem, wall := lim.CPUSeconds, lim.FileSizeMB, lim.MemoryMB, lim.Wall()
	heads := append([]string(nil), pol.AllowHeads...)
	slices.Sort(heads)
	dry := ""
	if s.opt.DryRun {
		dry = " DRY RUN: calls are gated and recorded but nothing is executed."
	}
	limit := fmt.Sprintf(" At most %d tool calls run in this session; past that every call is refused.", s.opt.MaxToolCalls)
	return []*mcp.Tool{
		{
			Name:  evidence.ToolRunCmd,
			Title: "Run a command (governed, sandboxed)",
			Description: "Run one command line in the workspace, inside an OS sandbox with NO network access. " +
				"Allowed programs: " + strings.Join(heads, ", ") + ". Pipes, && and || are allowed; shell redirection " +
				"(>, <), command substitution, background jobs, subshells, variable assignments, network tools " +
				"(curl, wget, ssh, ...), privilege tools (sudo, chmod, ...) and destructive commands (rm -rf, ...) " +
				"are refused. To create or change files use write_file or edit_file, not the shell. " +
				fmt.Sprintf("Limits: %s wall clock, %d s CPU, %d MiB memory, %d MiB per file; ", wall, cpu, mem, fsize) +
				fmt.Sprintf("the result is the exit code and the last %d KiB of stdout and stderr. ", s.opt.TailBytes>>10) +
				rules + limit + dry,
			InputSchema: schema([2]string{"cmd", "the command line, e.g. \"python3 -m pytest -q\""}),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
		},
		{
			Name:        evidence.ToolReadFile,
			Title:       "Read a file (governed)",
			Description: "Read one text file of the workspace and return its content. " + rules + limit + dry,
			InputSchema: schema([2]string{"path", "file path relative to the workspace root, e.g. \"src/app.py\""}),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		},
		{
			Name:  evidence.ToolWriteFile,
			Title: "Write a whole file (governed)",
			Description: "Create a file, or replace a file's whole content, in the workspace (parent directories are " +
				"created). To change part of an existing file use edit_file instead. " + rules + limit + dry,
			InputSchema: schema([2]string{"path", "file path relative to the workspace root"},
				[2]string{"content", "the complete new content of the file"}),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
		},
		{
			Name:  evidence.ToolEditFile,
			Title: "Edit a file by exact replacement (governed)",
			Description: "Replace one exact occurrence of 'old' with 'new' in a workspace file. 'old' must match the " +
				"file's text exactly (whitespace and line breaks included) and occur exactly once; with zero or " +
				"several matches nothing is changed and the error says how many — include more surrounding lines. " +
				"Use this for every change to an existing file. " + rules + limit + dry,
			InputSchema: schema([2]string{"path", "file path relative to the workspace root"},
				[2]string{"old", "the exact text to replace (non-empty, occurring once)"},
				[2]string{"new", "the replacement text (may be empty)"}),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
		},
		{
			Name:  evidence.ToolListDir,
			Title: "List a directory (governed)",
			Description: "List one directory of the workspace (\".\" is the root): directories end with /, files show their " +
				"size, symlinks are marked and not followed; long listings are cut. " + rules + limit + dry,
			InputSchema: schema([2]string{"path", "directory path relative to the workspace root, \".\" for the root"}),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		},
	}
}

// instructions is the server's description of itself, sent at
// initialisation.
func (s *Server) instructions() string {
	return "Deponent's governed tools are your only way to act on the workspace: run_cmd, read_file, " +
		"write_file, edit_file and list_dir. Each call passes a deny-by-default gate, runs confined " +
		"(commands in an OS sandbox without network), and is recorded in a hash-chained ledger; a " +
		"refused call returns an error that says why — change course instead of retrying it. " +
		"Use paths relative to the workspace root and edit_file for changes to existing files. " +
		"The run is judged by the record and an independent check, not by your final message."
}
