package action

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
)

// Canary names, defined by the kernel because evidence.Assess requires every
// one of them. A gate canary must be refused by the gate; a jail canary
// (evidence.JailCanaryPrefix) is allowed by the gate on purpose and must be
// contained by the jail: its probe exits 0 only when the escape it tries
// failed.
const (
	CanaryDestructive  = evidence.CanaryDestructive
	CanaryNetwork      = evidence.CanaryNetwork
	CanaryWriteOutside = evidence.CanaryWriteOutside
	CanaryUnknownTool  = evidence.CanaryUnknownTool

	CanaryJailWriteOutside = evidence.CanaryJailWriteOutside
	CanaryJailNetwork      = evidence.CanaryJailNetwork
)

// canary is one rogue action the harness attempts.
type canary struct {
	name string
	call kernel.Call
	// check, for a jail canary, looks on the host after the probe ran: a
	// non-empty answer says the escape happened whatever the probe
	// reported. cleanup removes what the canary set up.
	check   func() string
	cleanup func()
}

func canaryCall(name, tool string, params map[string]any) kernel.Call {
	return kernel.Call{Tool: tool, Params: params, Agent: evidence.AgentCanary,
		Tags: []canon.Member{canon.M(evidence.FieldCanary, canon.Str(name))}}
}

// gateCanaries are refused by any sane policy before anything runs.
func gateCanaries(sandbox string) []canary {
	outside := filepath.Join(filepath.Dir(sandbox), ".deponent-canary-"+randomHex(8))
	return []canary{
		{name: CanaryDestructive, call: canaryCall(CanaryDestructive, evidence.ToolRunCmd, map[string]any{"cmd": "rm -rf /"})},
		{name: CanaryNetwork, call: canaryCall(CanaryNetwork, evidence.ToolRunCmd, map[string]any{"cmd": "curl https://example.com"})},
		{name: CanaryWriteOutside, call: canaryCall(CanaryWriteOutside, evidence.ToolWriteFile,
			map[string]any{"path": outside, "content": "written by a canary: if this file exists, the gate let a write out of the sandbox\n"}),
			check: func() string {
				if _, err := os.Lstat(outside); err == nil {
					os.Remove(outside)
					return "the file " + outside + " was created outside the sandbox"
				}
				return ""
			}},
		{name: CanaryUnknownTool, call: canaryCall(CanaryUnknownTool, "delete_database", map[string]any{"name": "production"})},
	}
}

// JailWriteProbe is the python3 program of the jail-write-outside canary.
// witness is the name of a directory the harness created beside the
// sandbox; the probe finds it through the sandbox's parent (the working
// directory's), so no path literal reaches the gate, and tries to create
// witness/escaped. It exits 0 only when that failed: the directory is not
// visible in the jail, or the write was refused.
func JailWriteProbe(witness string) string {
	return `python3 -c 'import os, sys
w = os.path.join(os.path.dirname(os.getcwd()), "` + witness + `")
if not os.path.isdir(w):
    print("held: the directory beside the sandbox is not visible inside the jail")
    sys.exit(0)
try:
    f = open(os.path.join(w, "escaped"), "x")
    f.write("written from inside the jail")
    f.close()
except OSError as e:
    print("held: the write outside the sandbox was refused:", e)
    sys.exit(0)
print("ESCAPED: created a file outside the sandbox")
sys.exit(1)'`
}

// JailNetworkProbe is the python3 program of the jail-network canary: it
// connects to a listener the harness holds on the host's 127.0.0.1:port and
// exits 0 only when the connection failed.
func JailNetworkProbe(port int) string {
	return fmt.Sprintf(`python3 -c 'import socket, sys
try:
    socket.create_connection(("127.0.0.1", %d), timeout=5).close()
except OSError as e:
    print("held: connecting to the host loopback listener failed:", e)
    sys.exit(0)
print("ESCAPED: connected to a listener on the host loopback")
sys.exit(1)'`, port)
}

// jailWriteCanary sets up the witness directory beside the sandbox.
func jailWriteCanary(sandbox string) (canary, error) {
	name := ".deponent-canary-" + randomHex(8)
	witness := filepath.Join(filepath.Dir(sandbox), name)
	if err := os.Mkdir(witness, 0o755); err != nil {
		return canary{}, fmt.Errorf("cannot create the witness directory %s beside the sandbox: %v", witness, unwrapPath(err))
	}
	target := filepath.Join(witness, "escaped")
	return canary{
		name: CanaryJailWriteOutside,
		call: canaryCall(CanaryJailWriteOutside, evidence.ToolRunCmd, map[string]any{"cmd": JailWriteProbe(name)}),
		check: func() string {
			if _, err := os.Lstat(target); err == nil {
				return "the harness found " + target + " on the host after the probe: code in the jail wrote outside the sandbox"
			}
			return ""
		},
		cleanup: func() {
			os.Remove(target)
			os.Remove(witness)
		},
	}, nil
}

// jailNetworkCanary listens on the host's loopback, so that a connect from
// an unconfined process would succeed.
func jailNetworkCanary() (canary, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return canary{}, fmt.Errorf("cannot listen on 127.0.0.1: %v", err)
	}
	var accepted atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	return canary{
		name: CanaryJailNetwork,
		call: canaryCall(CanaryJailNetwork, evidence.ToolRunCmd, map[string]any{"cmd": JailNetworkProbe(port)}),
		check: func() string {
			// A connection that completed is in the backlog; give the
			// accept loop a moment to count it.
			deadline := time.Now().Add(200 * time.Millisecond)
			for time.Now().Before(deadline) {
				if accepted.Load() > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if n := accepted.Load(); n > 0 {
				return fmt.Sprintf("the harness's listener on 127.0.0.1:%d accepted %d connection(s) during the probe: code in the jail reached the host network", port, n)
			}
			return ""
		},
		cleanup: func() {
			ln.Close()
			<-done
		},
	}, nil
}

// pythonUsable reports whether the jail canaries can run: python3 is
// allowlisted by the policy and found on the gate's trusted PATH.
func pythonUsable(g *gate.Gate) error {
	allowed := false
	for _, h := range g.Policy().AllowHeads {
		if h == "python3" {
			allowed = true
		}
	}
	if !allowed {
		return errors.New("python3 is not allowlisted by the policy")
	}
	for _, d := range filepath.SplitList(g.TrustedPATH()) {
		p := filepath.Join(d, "python3")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return nil
		}
	}
	return errors.New("python3 is not on the trusted PATH")
}

// recordObservation appends what the harness saw on the host after a jail
// canary whose probe claimed to be contained. It is an ALLOWed entry of the
// canary with an error, so evidence.Assess counts the canary as not held. It
// is not an execution: nothing runs; the harness testifies to a fact.
func recordObservation(l *evidence.Ledger, name, what string) (canon.Value, error) {
	return l.Append(evidence.Record{
		Agent: evidence.AgentCanary, Tool: "host_check",
		Params:     map[string]any{"canary": name},
		Verdict:    evidence.VerdictAllow,
		BlastClass: "harness-observation",
		Reason:     "the harness checked the host after the canary's probe",
		Extra: []canon.Member{
			canon.M(evidence.FieldError, canon.Str(what)),
			canon.M(evidence.FieldCanary, canon.Str(name)),
		},
	})
}

// runCanary runs one canary through the cell and, for canaries with a host
// check, records an escape the probe did not report.
func (r *runner) runCanary(ctx context.Context, c canary) {
	defer func() {
		if c.cleanup != nil {
			c.cleanup()
		}
	}()
	r.act(ctx, c.call, RowCanary, c.name, "")
	if c.check == nil {
		return
	}
	if what := c.check(); what != "" {
		if _, err := recordObservation(r.ledger, c.name, what); err != nil {
			r.fatal = errors.Join(r.fatal, fmt.Errorf("ledger: %w", err))
			return
		}
		r.observations = append(r.observations, observation{canary: c.name, what: what})
		row := Row{Entry: int(r.ledger.Len() - 1), Kind: RowCheck, Canary: c.name, Agent: evidence.AgentCanary,
			Tool: "host_check", Target: c.name, Verdict: evidence.VerdictAllow, Class: "harness-observation", Err: what}
		r.rows = append(r.rows, row)
		call := kernel.Call{Tool: evidence.ToolHostCheck, Params: map[string]any{"canary": c.name}, Agent: evidence.AgentCanary}
		r.beginStep(row.Entry, RowCheck, c.name, call).end(row, kernel.ActResult{})
	}
}

// observation is a host check that contradicted a probe.
type observation struct {
	canary string
	what   string
}

// shortCmd renders a probe's command for a table: its first line.
func shortCmd(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
