//go:build unix

package main_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// unprivileged returns a directory for test files and a runner of the
// binary for which permissions are enforced: as root (how CI runs), the
// binary runs as the unprivileged user "nobody" — root reads a chmod 000
// file regardless — from a copy it may execute, on a directory it may
// traverse; otherwise both are the ordinary ones.
func unprivileged(t *testing.T) (dir string, runIt func(args ...string) result) {
	t.Helper()
	if os.Geteuid() != 0 {
		return t.TempDir(), func(args ...string) result { return run(t, nil, nil, args...) }
	}
	uid, gid := uint32(65534), uint32(65534)
	if u, err := user.Lookup("nobody"); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			uid = uint32(n)
		}
		if n, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			gid = uint32(n)
		}
	}
	// t.TempDir's parent is private to root: make a world-traversable one.
	base, err := os.MkdirTemp("", "deponent-verify-unpriv-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, filepath.Base(binary))
	copyFile(t, binary, bin, 0o755)
	dir = filepath.Join(base, "files")
	require.NoError(t, os.Mkdir(dir, 0o755))
	return dir, func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(cleanEnv(), "HOME=/nonexistent")
		cmd.Dir = base
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		require.NoError(t, ctx.Err(), "deponent-verify %v timed out", args)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err, "running deponent-verify as uid %d", uid)
		}
		return result{out.String(), errb.String(), code}
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}
