// Package mcprelay carries an MCP stdio session across a Unix socket, so
// that the governed session can live outside the jail the agent runs in.
//
// An agent CLI starts its MCP server as a child process and speaks
// newline-delimited JSON-RPC on the child's stdin and stdout. The agent runs
// in an agent jail (workspace read-only, private HOME and TMPDIR), and so
// would that child: it could neither write the workspace nor start the
// tools' jail. Instead the action hosts the governed session itself and
// listens on a Unix socket (Listen); the MCP config's command is the tiny
// relay (`deponent-action mcp --connect SOCKET`, body: Main/Relay), which
// pipes the CLI's stdio to the socket byte for byte. Only the socket's
// directory and the deponent binary need to be visible in the agent jail.
// The session side serves the official go-sdk over the accepted connection
// (Transport).
//
// # Contract (each point tested in this package)
//
//   - Both directions are copied unchanged, in order.
//   - EOF on the relay's stdin (the client closed it: the stdio way of
//     ending a session) half-closes the socket: the session reads EOF, and
//     whatever it still writes reaches stdout until it closes. (The go-sdk
//     server itself ends the session at EOF and cancels calls in flight;
//     their results are not delivered.)
//   - The session closing the connection ends the relay: stdout gets EOF.
//     Relay returns ErrSessionClosed when that happens while the client was
//     still talking (stdin not at EOF), nil after the client's own EOF.
//   - A client that goes away mid-call (stdout unwritable, stdin at EOF)
//     ends the relay, and the session sees its connection end.
//   - No session listening: Relay fails at once with an error naming the
//     socket.
//   - Listen makes a fresh directory (mode 0700) holding the socket (mode
//     0600); Close removes both. File and FromFile hand the listening
//     socket to another process (deponent-action mcp's detached session
//     server), whose Close then removes them; SetDeadline bounds Accept. On Linux, Accept also refuses a peer whose
//     uid is not ours (SO_PEERCRED). Another local user cannot connect
//     (tested as root with an unprivileged account).
//
// # Not covered
//
// Anyone who can reach the socket as our uid — the agent jail by design,
// which includes a built-in tool of the agent if one were left on — gets a
// session: that is the governed surface, not a bypass of it. The relay does
// not parse, filter or limit messages (the session does: go-sdk bounds a
// frame at 16 MiB by default); it is a pipe.
package mcprelay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SocketName is the socket's file name inside the directory Listen makes.
const SocketName = "mcp.sock"

// maxSocketPath is the longest socket path every supported OS accepts
// (sun_path is 104 bytes on macOS, 108 on Linux, NUL included).
const maxSocketPath = 103

// ErrSessionClosed is returned by Relay when the session closed the
// connection while the client was still talking.
var ErrSessionClosed = errors.New("mcprelay: the governed session closed the connection")

// ErrClientGone is returned by Relay when stdout could not be written: the
// client went away.
var ErrClientGone = errors.New("mcprelay: the MCP client went away (stdout closed)")

// Listener accepts relay connections on a socket in a private directory.
type Listener struct {
	dir  string
	path string
	ln   *net.UnixListener
	once sync.Once
	err  error
}

// Listen makes a fresh private directory under parent and listens on
// SocketName inside it. parent must be an absolute path; the socket path
// must fit sun_path on every supported OS.
func Listen(parent string) (*Listener, error) {
	if !filepath.IsAbs(parent) {
		return nil, fmt.Errorf("mcprelay: socket parent %q must be an absolute path", parent)
	}
	dir, err := os.MkdirTemp(parent, "deponent-mcp-")
	if err != nil {
		return nil, fmt.Errorf("mcprelay: %w", err)
	}
	path := filepath.Join(dir, SocketName)
	if len(path) > maxSocketPath {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("mcprelay: socket path %s is %d bytes, longer than the %d a Unix socket allows; use a shorter parent directory", path, len(path), maxSocketPath)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("mcprelay: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("mcprelay: listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("mcprelay: %w", err)
	}
	return &Listener{dir: dir, path: path, ln: ln}, nil
}

// Path is the socket's path: the relay's --connect argument.
func (l *Listener) Path() string { return l.path }

// Dir is the private directory holding the socket: what the agent jail
// must bind.
func (l *Listener) Dir() string { return l.dir }

// Accept waits for the next relay connection. On Linux a peer running as
// another uid is refused: its connection is closed and Accept returns an
// error saying so (the caller may go on accepting).
func (l *Listener) Accept() (*net.UnixConn, error) {
	c, err := l.ln.AcceptUnix()
	if err != nil {
		return nil, err
	}
	if err := checkPeer(c); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Close stops listening and removes the socket and its directory.
func (l *Listener) Close() error {
	l.once.Do(func() {
		l.err = errors.Join(l.ln.Close(), os.RemoveAll(l.dir))
	})
	return l.err
}

// Transport is an mcp.Transport over an accepted (or dialled) connection:
// newline-delimited JSON-RPC, the same framing as stdio.
func Transport(conn net.Conn) mcp.Transport {
	c := &onceCloser{Conn: conn}
	return &mcp.IOTransport{Reader: c, Writer: c}
}

// onceCloser closes the connection once: IOTransport closes its reader and
// its writer, which here are the same connection.
type onceCloser struct {
	net.Conn
	once sync.Once
	err  error
}

func (c *onceCloser) Close() error {
	c.once.Do(func() { c.err = c.Conn.Close() })
	return c.err
}

// Relay connects to the session at socket and copies stdin to it and its
// output to stdout until the session closes the connection (see the package
// contract for what it returns). Cancelling ctx closes the connection.
func Relay(ctx context.Context, socket string, stdin io.Reader, stdout io.Writer) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("mcprelay: cannot reach the governed session at %s: %w", socket, err)
	}
	uc := conn.(*net.UnixConn)
	defer uc.Close()
	stop := context.AfterFunc(ctx, func() { _ = uc.Close() })
	defer stop()

	inDone := make(chan error, 1) // stdin → socket finished: nil at stdin EOF
	go func() {
		err := pump(uc, stdin)
		// Whether stdin ended or failed, the client will send nothing
		// more: record that first (so the outcome below cannot race the
		// session's reaction), tell the session, and keep reading its
		// answers.
		inDone <- err.read
		_ = uc.CloseWrite()
	}()

	out := pump(stdout, uc)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if out.write != nil {
		return fmt.Errorf("%w: %v", ErrClientGone, out.write)
	}
	// The session closed (EOF) or reset the connection: it is over.
	select {
	case err := <-inDone:
		if err != nil {
			return fmt.Errorf("mcprelay: reading stdin: %w", err)
		}
		return nil
	default:
		return ErrSessionClosed
	}
}

// pumpErr tells a read failure from a write failure; read is nil at EOF.
type pumpErr struct{ read, write error }

// pump copies r to w until r ends or either side fails.
func pump(w io.Writer, r io.Reader) pumpErr {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return pumpErr{write: werr}
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return pumpErr{}
			}
			return pumpErr{read: rerr}
		}
	}
}

// File returns a duplicate of the listening socket, to hand to another
// process (os/exec ExtraFiles), which takes it over with FromFile.
func (l *Listener) File() (*os.File, error) { return l.ln.File() }

// FromFile takes over a listening socket another process made with Listen
// and handed over with File; dir is that Listener's Dir. Close then
// removes the socket and dir, as the original's would.
func FromFile(f *os.File, dir string) (*Listener, error) {
	fl, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("mcprelay: %w", err)
	}
	ul, ok := fl.(*net.UnixListener)
	if !ok {
		_ = fl.Close()
		return nil, errors.New("mcprelay: the inherited socket is not a Unix socket listener")
	}
	path := filepath.Join(dir, SocketName)
	if a, ok := ul.Addr().(*net.UnixAddr); !ok || a.Name != path {
		_ = ul.Close()
		return nil, fmt.Errorf("mcprelay: the inherited socket is not %s", path)
	}
	ul.SetUnlinkOnClose(true)
	return &Listener{dir: dir, path: path, ln: ul}, nil
}

// SetDeadline bounds the next Accept (the zero time: no bound).
func (l *Listener) SetDeadline(t time.Time) error { return l.ln.SetDeadline(t) }
