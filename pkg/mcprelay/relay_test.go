package mcprelay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helperEnv makes the test binary act as the relay command (see TestMain).
const helperEnv = "MCPRELAY_TEST_CONNECT"

func TestMain(m *testing.M) {
	if sock := os.Getenv(helperEnv); sock != "" {
		os.Exit(Main(context.Background(), []string{"--connect", sock}, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// waitLong bounds waits that only fail when something hangs; no test's pass
// depends on how fast it is.
const waitLong = 30 * time.Second

// session is a governed-session stand-in: a go-sdk server with an echo tool
// and a tool that blocks until released or cancelled, served on every
// connection the listener accepts.
type session struct {
	l          *Listener
	started    chan struct{} // a block call began
	release    chan struct{}
	mu         sync.Mutex
	sessions   []*mcp.ServerSession
	ended      chan error    // one value per session that ended (Wait's result)
	canceled   chan struct{} // closed when a block call saw its context end
	accErr     chan error    // Accept errors
	cancelOnce sync.Once
}

func newSession(t *testing.T) *session {
	t.Helper()
	l, err := Listen(t.TempDir())
	require.NoError(t, err)
	s := &session{l: l, started: make(chan struct{}, 8), release: make(chan struct{}),
		ended: make(chan error, 8), canceled: make(chan struct{}), accErr: make(chan error, 8)}
	srv := mcp.NewServer(&mcp.Implementation{Name: "relay-test", Version: "0"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "returns text"}, func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "block", Description: "waits"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		s.started <- struct{}{}
		select {
		case <-s.release:
		case <-ctx.Done():
			s.cancelOnce.Do(func() { close(s.canceled) })
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				s.accErr <- err
				continue
			}
			ss, err := srv.Connect(context.Background(), Transport(c), nil)
			if err != nil {
				s.accErr <- err
				continue
			}
			s.mu.Lock()
			s.sessions = append(s.sessions, ss)
			s.mu.Unlock()
			go func() { s.ended <- ss.Wait() }()
		}
	}()
	t.Cleanup(func() {
		s.mu.Lock()
		for _, ss := range s.sessions {
			_ = ss.Close()
		}
		s.mu.Unlock()
		_ = l.Close()
	})
	return s
}

func (s *session) waitEnded(t *testing.T) {
	t.Helper()
	select {
	case <-s.ended:
	case <-time.After(waitLong):
		t.Fatal("the session did not end")
	}
}

func (s *session) only(t *testing.T) *mcp.ServerSession {
	t.Helper()
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.sessions) == 1 }, waitLong, time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[0]
}

// relay runs Relay in-process on pipes and returns the client's ends.
type relayRun struct {
	stdinW  *io.PipeWriter // the client writes here
	stdoutR *io.PipeReader // the client reads here
	done    chan error
}

func startRelay(t *testing.T, socket string) *relayRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &relayRun{stdinW: inW, stdoutR: outR, done: make(chan error, 1)}
	go func() {
		err := Relay(context.Background(), socket, inR, outW)
		_ = outW.Close() // the client reads EOF once the relay is done
		_ = inR.Close()
		r.done <- err
	}()
	return r
}

func (r *relayRun) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(waitLong):
		t.Fatal("the relay did not return")
		return nil
	}
}

func TestRelayCarriesAnSDKSession(t *testing.T) {
	s := newSession(t)
	r := startRelay(t, s.l.Path())
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: r.stdoutR, Writer: r.stdinW}, nil)
	require.NoError(t, err)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 2)

	// Large enough to need many reads and writes each way.
	big := strings.Repeat("0123456789abcdef", 64<<10) + "\n\"end\" ✓"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": big}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Equal(t, big, res.Content[0].(*mcp.TextContent).Text)

	require.NoError(t, cs.Close())
	s.waitEnded(t)
	assert.NoError(t, r.wait(t), "the client ended the session: a clean end")
}

// jsonLines reads newline-delimited JSON-RPC messages.
func readMessage(t *testing.T, br *bufio.Reader) map[string]any {
	t.Helper()
	line, err := br.ReadBytes('\n')
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(line, &m), "%s", line)
	return m
}

const initReq = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}` + "\n"

func TestRelayHalfClosesOnStdinEOF(t *testing.T) {
	// A raw session that answers only after it has read EOF: the answer
	// arrives only if the relay half-closed instead of closing.
	l, err := Listen(t.TempDir())
	require.NoError(t, err)
	defer l.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		in, _ := io.ReadAll(c)
		got <- in
		_, _ = c.Write(append([]byte("answer to: "), in...))
	}()
	r := startRelay(t, l.Path())
	go func() {
		_, _ = io.WriteString(r.stdinW, initReq)
		_ = r.stdinW.Close()
	}()
	out, err := io.ReadAll(r.stdoutR)
	require.NoError(t, err)
	assert.Equal(t, initReq, string(<-got))
	assert.Equal(t, "answer to: "+initReq, string(out))
	assert.NoError(t, r.wait(t))
}

// The go-sdk server ends its session at EOF: the relay passes that on.
func TestRelaySDKSessionEndsAtStdinEOF(t *testing.T) {
	s := newSession(t)
	r := startRelay(t, s.l.Path())
	go func() {
		_, _ = io.WriteString(r.stdinW, initReq)
		_ = r.stdinW.Close()
	}()
	_, err := io.ReadAll(r.stdoutR)
	require.NoError(t, err)
	assert.NoError(t, r.wait(t))
	s.waitEnded(t)
}

func TestRelayEndsWhenTheSessionCloses(t *testing.T) {
	s := newSession(t)
	r := startRelay(t, s.l.Path())
	br := bufio.NewReader(r.stdoutR)
	go func() { _, _ = io.WriteString(r.stdinW, initReq) }()
	assert.EqualValues(t, 1, readMessage(t, br)["id"])

	require.NoError(t, s.only(t).Close())
	_, err := br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the client sees its server's stdout end")
	assert.ErrorIs(t, r.wait(t), ErrSessionClosed)
}

func TestRelayClientGoneMidCall(t *testing.T) {
	s := newSession(t)
	r := startRelay(t, s.l.Path())
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: r.stdoutR, Writer: r.stdinW}, nil)
	require.NoError(t, err)
	callErr := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
		callErr <- err
	}()
	select {
	case <-s.started:
	case <-time.After(waitLong):
		t.Fatal("the call never reached the session")
	}
	// The client dies: both its pipe ends close under the relay.
	_ = r.stdoutR.Close()
	_ = r.stdinW.Close()

	err = r.wait(t)
	assert.True(t, err == nil || errors.Is(err, ErrClientGone), "got %v", err)
	s.waitEnded(t)
	select {
	case <-s.canceled:
	case <-time.After(waitLong):
		t.Fatal("the in-flight call's context was not cancelled when its client went away")
	}
	assert.Error(t, <-callErr)
}

func TestRelayWithoutSession(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	err := Relay(context.Background(), sock, strings.NewReader(""), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), sock)

	var stderr bytes.Buffer
	code := Main(context.Background(), []string{"--connect", sock}, strings.NewReader(""), io.Discard, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "cannot reach the governed session at "+sock)
}

func TestRelayCancel(t *testing.T) {
	s := newSession(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Relay(ctx, s.l.Path(), inR, io.Discard) }()
	s.only(t)
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(waitLong):
		t.Fatal("cancel did not end the relay")
	}
	s.waitEnded(t)
}

func TestMainUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"--connect"}, {"--connect", "x", "extra"}, {"--bogus"}} {
		var stderr bytes.Buffer
		assert.Equal(t, 2, Main(context.Background(), args, strings.NewReader(""), io.Discard, &stderr), "%q", args)
		assert.NotEmpty(t, stderr.String())
	}
}

// The relay as a real child process, started the way an agent CLI starts
// its MCP server, through go-sdk's CommandTransport.
func relayCmd(t *testing.T, socket string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperEnv+"="+socket)
	return cmd
}

func TestRelayProcess(t *testing.T) {
	s := newSession(t)
	cmd := relayCmd(t, s.l.Path())
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "through a process"}})
	require.NoError(t, err)
	assert.Equal(t, "through a process", res.Content[0].(*mcp.TextContent).Text)
	require.NoError(t, cs.Close(), "the relay exits 0 after the client's EOF")
	require.NotNil(t, cmd.ProcessState)
	assert.Equal(t, 0, cmd.ProcessState.ExitCode())
	s.waitEnded(t)
}

func TestRelayProcessClientKilledMidCall(t *testing.T) {
	s := newSession(t)
	cmd := relayCmd(t, s.l.Path())
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	br := bufio.NewReader(stdout)
	_, err = io.WriteString(stdin, initReq)
	require.NoError(t, err)
	assert.EqualValues(t, 1, readMessage(t, br)["id"])
	_, err = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`+"\n")
	require.NoError(t, err)
	select {
	case <-s.started:
	case <-time.After(waitLong):
		t.Fatal("the call never reached the session")
	}
	// The client is gone: its ends of the relay's pipes close.
	_ = stdin.Close()
	_ = stdout.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(waitLong):
		_ = cmd.Process.Kill()
		t.Fatal("the relay process outlived its client")
	}
	s.waitEnded(t)
	select {
	case <-s.canceled:
	case <-time.After(waitLong):
		t.Fatal("the in-flight call was not cancelled")
	}
}

func TestListener(t *testing.T) {
	parent := t.TempDir()
	l, err := Listen(parent)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(l.Dir(), SocketName), l.Path())
	assert.Equal(t, parent, filepath.Dir(l.Dir()))
	fi, err := os.Stat(l.Dir())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	fi, err = os.Lstat(l.Path())
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket, fi.Mode().Type())
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	l2, err := Listen(parent)
	require.NoError(t, err)
	assert.NotEqual(t, l.Dir(), l2.Dir(), "each session gets its own directory")
	require.NoError(t, l2.Close())

	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "Close is idempotent")
	_, err = os.Stat(l.Dir())
	assert.True(t, os.IsNotExist(err), "Close removes the directory")
	_, err = l.Accept()
	assert.ErrorIs(t, err, net.ErrClosed)
}

func TestListenRefusesBadParents(t *testing.T) {
	_, err := Listen("relative/dir")
	assert.ErrorContains(t, err, "absolute")

	long := filepath.Join(t.TempDir(), strings.Repeat("d", 90))
	require.NoError(t, os.Mkdir(long, 0o700))
	_, err = Listen(long)
	require.ErrorContains(t, err, "longer than")
	entries, err := os.ReadDir(long)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing is left behind")
}

// asNobody runs python3 as the unprivileged user "nobody" to connect to
// path; it returns python's combined output and error.
func connectAsNobody(t *testing.T, path string) (string, error) {
	t.Helper()
	if runtime.GOOS != "linux" || os.Getuid() != 0 {
		t.Skip("SKIPPED LOUDLY: needs root on Linux to act as another user (CI runs as root)")
	}
	for _, tool := range []string{"runuser", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for this test: %v", tool, err)
		}
	}
	script := `import socket,sys
s=socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected")
s.recv(1)`
	out, err := exec.Command("runuser", "-u", "nobody", "--", "python3", "-c", script, path).CombinedOutput()
	return string(out), err
}

func TestOtherUserCannotConnect(t *testing.T) {
	// The listener's parent must be traversable by nobody, as a runner's
	// temp directory is; the private directory inside is what protects.
	parent, err := os.MkdirTemp("", "relay-perm-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(parent) })
	require.NoError(t, os.Chmod(parent, 0o755))
	l, err := Listen(parent)
	require.NoError(t, err)
	defer l.Close()

	out, err := connectAsNobody(t, l.Path())
	require.Error(t, err)
	assert.Contains(t, out, "PermissionError", "nobody is refused by the directory's mode")

	// Positive control: with the directory and socket opened up, nobody
	// does connect at the socket level — and Accept's uid check refuses it.
	require.NoError(t, os.Chmod(l.Dir(), 0o755))
	require.NoError(t, os.Chmod(l.Path(), 0o666))
	accErr := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if c != nil {
			_ = c.Close()
		}
		accErr <- err
	}()
	out, _ = connectAsNobody(t, l.Path())
	assert.Contains(t, out, "connected", "the control reached the socket")
	select {
	case err := <-accErr:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "refused a connection from uid")
	case <-time.After(waitLong):
		t.Fatal("Accept did not return")
	}
}

// TestListenerHandover: a listener handed over with File and FromFile
// accepts the relay's connections, refuses another socket, and its Close
// removes the socket and directory; SetDeadline bounds Accept.
func TestListenerHandover(t *testing.T) {
	l, err := Listen(t.TempDir())
	require.NoError(t, err)
	f, err := l.File()
	require.NoError(t, err)
	_, err = FromFile(f, t.TempDir())
	assert.Error(t, err, "the directory must be the listener's")
	f, err = l.File()
	require.NoError(t, err)
	h, err := FromFile(f, l.Dir())
	require.NoError(t, err)
	assert.Equal(t, l.Path(), h.Path())
	done := make(chan error, 1)
	go func() {
		c, err := h.Accept()
		if err == nil {
			_, err = c.Write([]byte("hello\n"))
			c.Close()
		}
		done <- err
	}()
	c, err := net.Dial("unix", l.Path())
	require.NoError(t, err)
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "hello\n", line)
	require.NoError(t, <-done)
	require.NoError(t, h.SetDeadline(time.Now().Add(50*time.Millisecond)))
	_, err = h.Accept()
	assert.Error(t, err, "the deadline ends Accept")
	require.NoError(t, h.Close())
	assert.NoDirExists(t, l.Dir())
}
