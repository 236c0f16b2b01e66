//go:build !race

package action

const raceEnabled = false
