package verify

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/verify/verifytest"
)

func TestPanicIsAFailureNotAnOutcome(t *testing.T) {
	r := &runner{o: &Options{}, mem: newBudget(MemoryBudget)}
	r.addJob("boom.json", KindReceipt, func() (io.ReadCloser, int64, error) { panic("kaboom") })
	r.addJob("fine.json", KindReceipt, func() (io.ReadCloser, int64, error) {
		return io.NopCloser(strings.NewReader(string(verifytest.Bytes(verifytest.Build(t, verifytest.Spec{}))))), -1, nil
	})
	r.runJobs()
	assert.False(t, len(r.items[0].Problems) == 0)
	assert.Contains(t, r.items[0].Reason(), "internal error (a bug, reported as a failure): kaboom")
	assert.Empty(t, r.items[1].Problems)
}

func TestRunOnAStore(t *testing.T) {
	root := t.TempDir()
	verifytest.Persist(t, root, verifytest.Spec{}, verifytest.Spec{SessionID: "s2"})
	o := DefaultOptions()
	o.ExpectCommit = verifytest.Commit
	rep, err := Run([]string{root}, o)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Items)
	kinds := map[Kind]int{}
	for _, it := range rep.Items {
		kinds[it.Kind]++
	}
	assert.Equal(t, map[Kind]int{KindDirectory: 1, KindReceipt: 2, KindIndex: 1, KindLatest: 1}, kinds)
	assert.Equal(t, 0, rep.ExitCode())
}

func TestStdinWithoutReaderIsEmpty(t *testing.T) {
	rep, err := Run([]string{"-"}, DefaultOptions())
	require.NoError(t, err)
	require.Len(t, rep.Items, 2)
	assert.Contains(t, rep.Items[0].Reason(), "file is empty")
	assert.Equal(t, "0 distinct receipts verified; at least 1 required (--min-receipts 0 accepts none)", rep.Items[1].Reason())
}

// TestLedgerPolicyScan: --max-blocked on a bare ledger counts the agent's
// blocked lines as the ledger streams (canaries not counted).
func TestLedgerPolicyScan(t *testing.T) {
	p := filepath.Join(t.TempDir(), "l.jsonl")
	verifytest.Ledger(t, p, 5000, func(i int) evidence.Record {
		switch i {
		case 4000:
			return verifytest.Ran("builder", "", 0)
		case 10, 20:
			return verifytest.Step("builder", "run_cmd", evidence.VerdictBlock)
		case 30:
			return verifytest.Step(evidence.AgentCanary, "run_cmd", evidence.VerdictBlock)
		}
		return verifytest.Typical(i)
	})
	o := Options{ChainOnly: true}
	one := int64(1)
	o.MaxBlocked = &one
	rep, err := Run([]string{p}, o)
	require.NoError(t, err)
	it := rep.Items[0]
	assert.True(t, it.Verified)
	require.Len(t, it.Problems, 1)
	assert.Contains(t, it.Problems[0].Msg, "2 blocked entries, not counting canaries; --max-blocked 1")
	require.NotNil(t, it.AgentBlocked)
	assert.Equal(t, int64(2), *it.AgentBlocked)

	// A broken ledger stops package evidence early; the scanner must not hang.
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	broken := filepath.Join(t.TempDir(), "b.jsonl")
	require.NoError(t, os.WriteFile(broken, append([]byte("garbage\n"), data...), 0o644))
	done := make(chan *Report)
	go func() {
		rep, _ := Run([]string{broken}, o)
		done <- rep
	}()
	select {
	case rep := <-done:
		assert.Contains(t, rep.Items[0].Reason(), "line 1 (entry 0): malformed-entry")
	case <-time.After(time.Minute):
		t.Fatal("verification of a broken ledger with a policy scan hung")
	}
}

func TestReadLine(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader("a\n"+strings.Repeat("x", 100)+"\nlast"), 16)
	line, err := readLine(br, nil, 50)
	require.NoError(t, err)
	assert.Equal(t, "a", string(line))
	_, err = readLine(br, nil, 50)
	assert.ErrorIs(t, err, errLineTooLong)

	br = bufio.NewReaderSize(strings.NewReader("ok\nlast"), 16)
	_, _ = readLine(br, nil, 50)
	line, err = readLine(br, nil, 50)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, "last", string(line), "a torn last line is returned with io.EOF")
	line, err = readLine(br, nil, 50)
	assert.ErrorIs(t, err, io.EOF)
	assert.Empty(t, line)
}

func TestBudget(t *testing.T) {
	b := newBudget(10)
	assert.Equal(t, int64(10), b.acquire(1000), "clamped to the whole budget")
	b.release(10)
	var inUse, peak atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := b.acquire(4)
			cur := inUse.Add(n)
			for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
			}
			time.Sleep(time.Millisecond)
			inUse.Add(-n)
			b.release(n)
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int64(10))
}

func TestCannotReadIsAFailure(t *testing.T) {
	r := &runner{o: &Options{}, mem: newBudget(MemoryBudget)}
	r.addJob("x.json", KindReceipt, func() (io.ReadCloser, int64, error) { return nil, 0, errors.New("device on fire") })
	r.addJob("big.json", KindReceipt, func() (io.ReadCloser, int64, error) {
		return io.NopCloser(strings.NewReader("")), evidence.MaxReceiptBytes + 1, nil
	})
	r.runJobs()
	assert.Equal(t, "cannot read: device on fire", r.items[0].Reason())
	assert.Contains(t, r.items[1].Reason(), "over the 67108864-byte receipt cap: not read")
}

// TestReadTimeout: standard input or a pipe that never closes fails once
// the read timeout is up, as does a named pipe no one writes to; with no
// limit asked for, a slow writer is waited for. (The limit is a second:
// the test checks what happens when it is up, not how fast anything is.)
func TestReadTimeout(t *testing.T) {
	o := Options{ReadTimeout: time.Second}
	// Standard input that sends half a receipt and never closes.
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	go pw.Write(verifytest.Bytes(verifytest.Build(t, verifytest.Spec{}))[:100])
	o.Stdin = pr
	rep, err := Run([]string{"-"}, o)
	require.NoError(t, err)
	assert.Contains(t, rep.Items[0].Reason(), "cannot read: not read to its end within --read-timeout 1s (standard input or a pipe that does not close?)")

	// A named pipe with no writer: even opening it would block.
	if runtime.GOOS != "windows" {
		fifo := filepath.Join(t.TempDir(), "never.json")
		require.NoError(t, mkfifo(fifo))
		rep, err = Run([]string{fifo}, Options{ReadTimeout: time.Second})
		require.NoError(t, err)
		assert.Contains(t, rep.Items[0].Reason(), "nothing could be opened within --read-timeout 1s")
		// A ledger named pipe whose writer stalls.
		ledger := filepath.Join(t.TempDir(), "stall.jsonl")
		require.NoError(t, mkfifo(ledger))
		done := make(chan struct{})
		t.Cleanup(func() { close(done) })
		go func() {
			f, err := os.OpenFile(ledger, os.O_WRONLY, 0)
			if err == nil {
				f.Write([]byte("{"))
				<-done // the writer stalls until the test is over
				f.Close()
			}
		}()
		rep, err = Run([]string{ledger}, Options{ReadTimeout: time.Second, ChainOnly: true})
		require.NoError(t, err)
		assert.Contains(t, rep.Items[0].Reason(), "within --read-timeout 1s")
	}

	// Without a limit, a writer that takes its time is waited for.
	pr, pw = io.Pipe()
	data := verifytest.Bytes(verifytest.Build(t, verifytest.Spec{}))
	go func() {
		pw.Write(data[:100])
		time.Sleep(1500 * time.Millisecond)
		pw.Write(data[100:])
		pw.Close()
	}()
	rep, err = Run([]string{"-"}, Options{Stdin: pr, NoReadTimeout: true})
	require.NoError(t, err)
	assert.True(t, rep.OK, "%+v", rep.Items)
	assert.Equal(t, "--read-timeout 0", rep.Policy.Relaxed[0].Flag)
}
