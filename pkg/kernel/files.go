package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// MaxListEntries caps how many entries list_dir returns; the listing says
// how many more there were.
const MaxListEntries = 1000

// maxCountedMatches bounds how far editFile counts the occurrences of old
// when there is more than one (the message says "at least").
const maxCountedMatches = 1000

// editFile replaces the one occurrence of old with new in the file rel and
// returns the new content. The file is read through an os.Root of the
// sandbox and written back through writeFile (a temporary file and a
// rename, the mode kept). old must occur exactly once, counting
// overlapping occurrences ("aa" occurs twice in "aaa"): zero or several
// matches change nothing and the error tells the agent how many, so it can
// widen the text or read the file again.
func (c *Cell) editFile(ctx context.Context, rel, old, new string) (string, error) {
	if old == "" {
		// The gate refuses this; the executor does not rely on it.
		return "", fmt.Errorf("edit_file %s: 'old' is empty; give the exact text to replace, or use write_file for a whole file", rel)
	}
	if c.isGitConfig(rel) {
		// Its bytes on disk may hold credentials that read_file and jailed
		// commands only ever see sanitized; a match count would reveal
		// them one guess at a time.
		return "", fmt.Errorf("edit_file %s: a git config file is not edited with edit_file (it can hold credentials the tools do not show); nothing was changed", rel)
	}
	data, err := c.readRegular("edit_file", rel)
	if err != nil {
		return "", err
	}
	content := string(data)
	first := strings.Index(content, old)
	if first < 0 {
		return "", fmt.Errorf("edit_file %s: 'old' was not found (0 matches): nothing was changed; read_file the file and copy the exact text, whitespace and line breaks included", rel)
	}
	if n := countOverlapping(content, old, maxCountedMatches); n > 1 {
		more := ""
		if n >= maxCountedMatches {
			more = "at least "
		}
		return "", fmt.Errorf("edit_file %s: 'old' matches %s%d places: nothing was changed; include more of the surrounding lines in 'old' so that it matches exactly once", rel, more, n)
	}
	updated := content[:first] + new + content[first+len(old):]
	if err := c.writeFile(ctx, rel, updated); err != nil {
		return "", fmt.Errorf("edit_file %s: the edited content could not be written, the file is unchanged: %w", rel, err)
	}
	return updated, nil
}

// countOverlapping counts the occurrences of sub in s, overlapping ones
// included, stopping at limit.
func countOverlapping(s, sub string, limit int) int {
	n := 0
	for i := 0; n < limit; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			break
		}
		n++
		_, size := utf8.DecodeRuneInString(s[i+j:])
		i += j + size
	}
	return n
}

// isGitConfig reports whether rel is a file git reads a repository's
// settings from (jail.IsGitConfig), looked up through an os.Root of the
// sandbox.
func (c *Cell) isGitConfig(rel string) bool {
	root, err := os.OpenRoot(c.gate.Sandbox())
	if err != nil {
		return true // fail closed
	}
	defer root.Close()
	return jail.IsGitConfig(rel, func(p string) bool {
		st, err := root.Lstat(p)
		return err == nil && st.Mode().IsRegular()
	})
}

// openNonBlocking opens rel read-only through root without waiting on it,
// and returns what it is. A step may leave a named pipe (or a socket) where
// a file or directory was: a plain open of a FIFO waits for a writer that
// never comes, and the Cell would hang holding its lock, with every later
// call of the session queued behind it. O_NONBLOCK makes that open return
// at once (it changes nothing for regular files and directories), and the
// callers refuse anything that is not what they read.
func openNonBlocking(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// openRegular opens the regular file rel through root (openNonBlocking);
// anything else is an error that names what it is.
func openRegular(root *os.Root, tool, rel string) (*os.File, error) {
	f, st, err := openNonBlocking(root, rel)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", tool, rel, unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s %s: not a regular file (%s)", tool, rel, kindOf(st.Mode()))
	}
	return f, nil
}

// readRegular reads the regular file rel through an os.Root of the sandbox,
// bounded by MaxReadBytes.
func (c *Cell) readRegular(tool, rel string) ([]byte, error) {
	root, err := os.OpenRoot(c.gate.Sandbox())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	defer root.Close()
	f, err := openRegular(root, tool, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", tool, rel, unwrapPathError(err))
	}
	if len(data) > MaxReadBytes {
		return nil, fmt.Errorf("%s %s: larger than the %d-byte cap", tool, rel, MaxReadBytes)
	}
	return data, nil
}

// listDir lists the directory rel ("." is the sandbox) through an os.Root
// of the sandbox: one line per entry, sorted by name, "NAME/" for a
// directory, "NAME  (N bytes)" for a regular file, "NAME@  (symlink)" for a
// symbolic link (never followed), "NAME  (other: KIND)" for anything else.
// At most MaxListEntries entries are listed; a last line says how many more
// there were. Names are shown as they are, control characters escaped.
func (c *Cell) listDir(rel string) ([]byte, error) {
	root, err := os.OpenRoot(c.gate.Sandbox())
	if err != nil {
		return nil, fmt.Errorf("list_dir: %w", err)
	}
	defer root.Close()
	f, st, err := openNonBlocking(root, rel)
	if err != nil {
		return nil, fmt.Errorf("list_dir %s: %w", rel, unwrapPathError(err))
	}
	defer f.Close()
	if !st.IsDir() {
		return nil, fmt.Errorf("list_dir %s: not a directory (%s); use read_file for a file", rel, kindOf(st.Mode()))
	}
	var entries []fs.DirEntry
	total := 0
	for {
		batch, err := f.ReadDir(256)
		total += len(batch)
		// Keep every name to sort, but only as many as will be shown
		// plus the rest's count: a huge directory costs its count, not
		// its names.
		entries = append(entries, batch...)
		if len(entries) > 4*MaxListEntries {
			sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
			entries = entries[:MaxListEntries]
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list_dir %s: %w", rel, unwrapPathError(err))
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	if len(entries) > MaxListEntries {
		entries = entries[:MaxListEntries]
	}
	var b strings.Builder
	for _, e := range entries {
		name := showName(e.Name())
		switch t := e.Type(); {
		case t.IsDir():
			b.WriteString(name + "/\n")
		case t&fs.ModeSymlink != 0:
			b.WriteString(name + "@  (symlink)\n")
		case t.IsRegular():
			size := "?"
			if info, err := e.Info(); err == nil {
				size = strconv.FormatInt(info.Size(), 10)
			}
			b.WriteString(name + "  (" + size + " bytes)\n")
		default:
			b.WriteString(name + "  (other: " + kindOf(t) + ")\n")
		}
	}
	if total == 0 {
		b.WriteString("(empty directory)\n")
	}
	if more := total - len(entries); more > 0 {
		fmt.Fprintf(&b, "... and %d more entries not listed (the first %d by name are shown); list a subdirectory or use run_cmd with ls or find\n", more, MaxListEntries)
	}
	return []byte(b.String()), nil
}

// showName escapes control characters and invalid UTF-8 in a file name so
// that one entry is one line.
func showName(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isControl) {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
