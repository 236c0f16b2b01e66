//go:build !unix

package benchmem

func cpuTime() (float64, bool) { return 0, false }
