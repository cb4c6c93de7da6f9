//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package npybridge

import (
	"errors"
	"os"
	"syscall"
)

const canMap = true

// mapFile maps the first n bytes of f read-only and shared: pages come from
// the page cache on demand and count against no heap.
func mapFile(f *os.File, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

// mapFileWritable maps the first n bytes of f read-write and shared: what
// is written to the mapping is the file's page cache, seen at once by
// every process that reads or maps the file.
func mapFileWritable(f *os.File, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func unmap(b []byte) error { return syscall.Munmap(b) }

// mapSection maps n bytes of f from off, which need not be page-aligned:
// it returns the mapping (for unmap) and the n bytes within it.
func mapSection(f *os.File, off int64, n int) (mapping, section []byte, err error) {
	page := int64(os.Getpagesize())
	base := off &^ (page - 1)
	m, err := syscall.Mmap(int(f.Fd()), base, int(off-base)+n, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return m, m[off-base:], nil
}

// writeFailure says why an Append's write failed, for its error.
func writeFailure(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	case errors.Is(err, syscall.EDQUOT):
		return "the disk quota is exceeded"
	}
	return "the write failed"
}
