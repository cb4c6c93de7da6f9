//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package npybridge

import (
	"os"
	"syscall"
)

const canMap = true

// mapFile maps the first n bytes of f read-only and shared: pages come from
// the page cache on demand and count against no heap.
func mapFile(f *os.File, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(b []byte) error { return syscall.Munmap(b) }
