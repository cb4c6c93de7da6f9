//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package npybridge

import (
	"errors"
	"os"
)

// Without mmap, OpenMapped reads the data into memory.
const canMap = false

func mapFile(*os.File, int) ([]byte, error) { return nil, errors.New("mmap is not available") }

func mapFileWritable(*os.File, int) ([]byte, error) {
	return nil, errors.New("mmap is not available")
}

func unmap([]byte) error { return nil }

func mapSection(*os.File, int64, int) ([]byte, []byte, error) {
	return nil, nil, errors.New("mmap is not available")
}

// writeFailure says why an Append's write failed, for its error; the
// cause that follows it tells a full disk here.
func writeFailure(error) string { return "the write failed" }
