package action

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCgroupDir(t *testing.T) {
	env := func(v string) Getenv { return func(k string) string { return map[string]string{EnvCgroup: v}[k] } }
	assert.Equal(t, "", cgroupDir(env("")), "none delegated: the jail chooses")
	assert.Equal(t, "/sys/fs/cgroup/deponent-1-1-42", cgroupDir(env(" /sys/fs/cgroup/deponent-1-1-42/ ")))
	assert.Equal(t, "", cgroupDir(env("sys/fs/cgroup/x")), "not absolute: not what action.yml writes")
}
