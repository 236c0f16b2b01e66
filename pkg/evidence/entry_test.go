package evidence

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

func TestReadEntry(t *testing.T) {
	base := chain(t, ran("builder", 3, canon.M(FieldKilled, canon.Str("cpu>60s")), canon.M(FieldDurationMS, canon.Int(12)),
		canon.M(FieldTampered, canon.Arr(canon.Str(".git/config"))), canon.M(FieldMemoryGuard, canon.Str("cgroup"))))[0]
	e, err := ReadEntry(base)
	require.NoError(t, err)
	assert.Equal(t, "builder", e.Agent)
	assert.Equal(t, ToolRunCmd, e.Tool)
	assert.Equal(t, VerdictAllow, e.Verdict)
	require.NotNil(t, e.ExitCode)
	assert.Equal(t, int64(3), *e.ExitCode)
	require.NotNil(t, e.Jail)
	assert.Equal(t, "bwrap", *e.Jail)
	assert.Equal(t, "cpu>60s", e.Killed)
	assert.Equal(t, []string{".git/config"}, e.Tampered)
	assert.Equal(t, "cgroup", e.MemoryGuard)
	assert.True(t, e.Executed())
	assert.False(t, e.Succeeded())
	assert.Equal(t, "was killed: cpu>60s", e.Failure())

	bad := map[string]struct {
		v    canon.Value
		want string
	}{
		"not an object":       {canon.Str("x"), "want an object"},
		"verdict unknown":     {base.With(FieldVerdict, canon.Str("MAYBE")), "neither ALLOW nor BLOCK"},
		"agent missing":       {base.Without(FieldAgent), `missing field "agent"`},
		"tool not a string":   {base.With(FieldTool, canon.Int(1)), `field "tool" is a number`},
		"exit code float":     {base.With(FieldExitCode, mustFloat(0.5)), `field "exit_code" is 0.5`},
		"jail not a string":   {base.With(FieldJail, canon.BoolValue(true)), `field "jail" is a bool`},
		"killed empty":        {base.With(FieldKilled, canon.Str("")), "recorded only with the reason"},
		"killed true":         {base.With(FieldKilled, canon.BoolValue(true)), `field "killed" is a bool`},
		"killed array":        {base.With(FieldKilled, canon.Arr()), `field "killed" is a array`},
		"dry_run false":       {base.With(FieldDryRun, canon.BoolValue(false)), "recorded only as true"},
		"dry_run string":      {base.With(FieldDryRun, canon.Str("true")), `field "dry_run" is a string`},
		"unjailed number":     {base.With(FieldUnjailed, canon.Int(1)), `field "unjailed" is a number`},
		"error not a string":  {base.With(FieldError, canon.Obj()), `field "error" is a object`},
		"tampered empty":      {base.With(FieldTampered, canon.Arr()), "non-empty array"},
		"tampered string":     {base.With(FieldTampered, canon.Str(".git")), "non-empty array"},
		"tampered not paths":  {base.With(FieldTampered, canon.Arr(canon.Int(1))), `"tampered"[0] is a number`},
		"tool calls a string": {base.With(FieldToolCalls, canon.Str("3")), `field "tool_calls" is a string`},
		"task guard a number": {base.With(FieldTaskGuard, canon.Int(1)), `field "task_guard" is a number`},
		"output bytes a bool": {base.With(FieldOutputBytes, canon.BoolValue(true)), `field "output_bytes" is a bool`},
	}
	for name, c := range bad {
		_, err := ReadEntry(c.v)
		assert.ErrorContains(t, err, c.want, name)
	}
	// Unknown extra fields are hashed, and judged by nothing.
	_, err = ReadEntry(base.With("note", canon.Obj()))
	assert.NoError(t, err)
}
