//go:build race

package main_test

// raceFlags builds the binary under test with the race detector when the
// tests themselves run with it, so the e2e runs check the real binary too.
var raceFlags = []string{"-race"}
