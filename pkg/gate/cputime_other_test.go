//go:build !unix

package gate

import "testing"

type cpuClock struct{}

func startCPU() cpuClock             { return cpuClock{} }
func (cpuClock) report(b *testing.B) {}
