// Package version holds the single version string both binaries print.
package version

// Version is the release of this module. It is written into every receipt's
// provenance (tool_version) and printed by --version.
const Version = "0.1.0"
