// Command sourcemanifest writes the source manifest of the module in the
// current directory (see package release): GoReleaser's before hook runs
// it, and its sha256 goes into checksums.txt.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/deponent-dev/deponent-action/internal/release"
)

func main() {
	out := flag.String("o", "", "write the manifest to this file (required)")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: sourcemanifest -o FILE   (run from the module root)")
		os.Exit(2)
	}
	m, err := release.SourceManifest(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Written beside, then renamed: never a half-written manifest.
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, m, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Rename(tmp, *out); err != nil {
		os.Remove(tmp)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
