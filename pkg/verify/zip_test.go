package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/verify/verifytest"
)

func TestZipNameProblem(t *testing.T) {
	for _, ok := range []string{"a.json", "deponent/20260102T030405Z_s1.json", "dir/", "a/b/c/LATEST", "ünïcode.json"} {
		assert.Empty(t, zipNameProblem(ok), ok)
	}
	bad := map[string]string{
		"":                 "empty",
		"../x.json":        "clean relative path",
		"a/../../x.json":   "clean relative path",
		"a/./x.json":       "clean relative path",
		"a//x.json":        "clean relative path",
		"./x.json":         "clean relative path",
		"..":               "clean relative path",
		"/etc/x.json":      "absolute",
		"C:/x.json":        "absolute",
		"c:x.json":         "absolute",
		`a\x.json`:         "backslash",
		`..\..\x.json`:     "backslash",
		"a\x00.json":       "control character",
		"a\n.json":         "control character",
		"\xff.json":        "UTF-8",
		"dir/../":          "clean relative path",
		"/":                "absolute",
		"a/b/../../../etc": "clean relative path",
	}
	for name, want := range bad {
		assert.Contains(t, zipNameProblem(name), want, "%q", name)
	}
}

func TestOpenZipCaps(t *testing.T) {
	t.Run("declared count over the cap", func(t *testing.T) {
		data := verifytest.Zip(t, []verifytest.ZipFile{{Name: "a.txt"}})
		eocd := bytes.LastIndex(data, []byte("PK\x05\x06"))
		binary.LittleEndian.PutUint16(data[eocd+8:], 0xfff0)
		binary.LittleEndian.PutUint16(data[eocd+10:], 0xfff0)
		n, ok := declaredEntries(bytes.NewReader(data), int64(len(data)))
		require.True(t, ok)
		assert.Equal(t, uint64(0xfff0), n)
		_, err := openZip(bytes.NewReader(data), int64(len(data)))
		assert.ErrorContains(t, err, "declares 65520 members")
	})
	t.Run("a count that lies modulo 65536", func(t *testing.T) {
		// 65,537 members declare 1 (the 16-bit field wraps): the listing
		// itself must be counted.
		files := make([]verifytest.ZipFile, 65_537)
		for i := range files {
			files[i] = verifytest.ZipFile{Name: fmt.Sprint(i), Store: true}
		}
		data := verifytest.Zip(t, files)
		// Go's writer switches to zip64 past 65,535 members; rewrite the
		// plain record as an older writer would (count mod 65536) and
		// blank the zip64 locator.
		eocd := bytes.LastIndex(data, []byte("PK\x05\x06"))
		z64 := bytes.LastIndex(data, []byte("PK\x06\x06"))
		require.Positive(t, z64)
		binary.LittleEndian.PutUint16(data[eocd+8:], 1)
		binary.LittleEndian.PutUint16(data[eocd+10:], 1)
		binary.LittleEndian.PutUint32(data[eocd+12:], uint32(binary.LittleEndian.Uint64(data[z64+40:])))
		binary.LittleEndian.PutUint32(data[eocd+16:], uint32(binary.LittleEndian.Uint64(data[z64+48:])))
		copy(data[eocd-20:], "XX")
		n, ok := declaredEntries(bytes.NewReader(data), int64(len(data)))
		require.True(t, ok)
		require.Equal(t, uint64(1), n)
		_, err := openZip(bytes.NewReader(data), int64(len(data)))
		assert.ErrorContains(t, err, "65537 members, over the 20000-member cap")
	})
	t.Run("central directory over the byte cap", func(t *testing.T) {
		long := strings.Repeat("n", 60_000)
		files := make([]verifytest.ZipFile, 150)
		for i := range files {
			files[i] = verifytest.ZipFile{Name: fmt.Sprintf("%s%03d", long, i), Store: true}
		}
		data := verifytest.Zip(t, files)
		_, err := openZip(bytes.NewReader(data), int64(len(data)))
		assert.ErrorContains(t, err, "central directory is over the 8388608-byte cap")
	})
	t.Run("not a zip", func(t *testing.T) {
		_, err := openZip(strings.NewReader("hello"), 5)
		assert.ErrorContains(t, err, "not a readable zip archive")
		_, ok := declaredEntries(strings.NewReader("hello"), 5)
		assert.False(t, ok)
	})
}

// endless yields zeros forever.
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }
func (endless) Close() error               { return nil }

func TestGuardedReader(t *testing.T) {
	var total atomic.Int64
	total.Store(1 << 40)
	g := &guardedReader{rc: endless{}, ratioMax: 1 << 20, total: &total}
	n, err := io.Copy(io.Discard, g)
	assert.ErrorContains(t, err, "inflates more than 100:1")
	assert.LessOrEqual(t, n, int64(1<<20))

	total.Store(3 << 20)
	g = &guardedReader{rc: endless{}, ratioMax: 1 << 40, total: &total}
	n, err = io.Copy(io.Discard, g)
	assert.ErrorContains(t, err, "the archive inflates to more than")
	assert.LessOrEqual(t, n, int64(3<<20))
}

func TestZipRefs(t *testing.T) {
	data := verifytest.Zip(t, []verifytest.ZipFile{
		{Name: "deponent/"},
		{Name: "deponent/x.json", Data: []byte("{}")},
		{Name: "deponent/index.jsonl"},
		{Name: "deponent/LATEST"},
		{Name: "ledger.jsonl"},
		{Name: "README.md"},
		{Name: "link.json", Mode: 0o777 | 1<<27}, // os.ModeSymlink
		{Name: "../x.json"},
	})
	z, err := openZip(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	got := map[string]refKind{}
	for _, r := range z.refs("a.zip") {
		got[r.display] = r.kind
	}
	assert.Equal(t, map[string]refKind{
		"a.zip!deponent/x.json": refReceipt, "a.zip!deponent/index.jsonl": refIndex, "a.zip!deponent/LATEST": refLatest,
		"a.zip!ledger.jsonl": refLedger, "a.zip!README.md": refOther, "a.zip!link.json": refBad, "a.zip!../x.json": refBad,
	}, got)
}
