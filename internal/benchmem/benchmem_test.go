package benchmem

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

var sink []byte

func TestPeak(t *testing.T) {
	ran := false
	mapped, resident := Peak(func() {
		ran = true
		sink = make([]byte, 64<<20)
		for i := range sink {
			sink[i] = 1 // touch every page, so that it is resident
		}
	})
	sink = nil
	assert.True(t, ran)
	assert.GreaterOrEqual(t, mapped, 64.0, "a 64 MB allocation is seen")
	assert.GreaterOrEqual(t, resident, 64.0)
	assert.LessOrEqual(t, resident, mapped)
}

func TestCPU(t *testing.T) {
	sec, ok := CPU(func() {
		x := 0
		for i := range 200_000_000 {
			x += i
		}
		sink = []byte{byte(x)}
	})
	if !ok {
		t.Skip("no CPU time on this platform")
	}
	assert.Positive(t, sec, "a busy loop uses CPU time")
}
