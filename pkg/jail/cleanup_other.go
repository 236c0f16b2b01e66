//go:build !linux

package jail

// removeCreatedMountPoints is bwrap's (Linux only); elsewhere no mount point
// is ever created.
func removeCreatedMountPoints(string, []protected) {}
