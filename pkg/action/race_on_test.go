//go:build race

package action

// raceEnabled builds the end-to-end binaries with -race too.
const raceEnabled = true
