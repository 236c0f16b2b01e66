package jail

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// emptySHA256 is the hash of no output (a step that did not run).
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// readOutput hashes the whole output file and returns its last tail bytes.
// The file is read, not a pipe, so a child that kept writing cannot have
// stalled the watchdog, and a huge output costs a streaming hash, not memory.
func readOutput(path string, tail int) (last []byte, sum string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", 0, fmt.Errorf("jail: output: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	size, err = io.Copy(h, f)
	if err != nil {
		return nil, "", 0, fmt.Errorf("jail: output: %w", err)
	}
	n := int64(tail)
	if n > size {
		n = size
	}
	last = make([]byte, n)
	if _, err := f.ReadAt(last, size-n); err != nil && err != io.EOF {
		return nil, "", 0, fmt.Errorf("jail: output tail: %w", err)
	}
	return last, hex.EncodeToString(h.Sum(nil)), size, nil
}
