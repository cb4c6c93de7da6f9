//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filesection

import (
	"os"
	"syscall"
)

const canMap = true

var pageSize = int64(os.Getpagesize())

func mapRange(f *os.File, off int64, n int) ([]byte, error) {
	m, err := syscall.Mmap(int(f.Fd()), off, n, syscall.PROT_READ, syscall.MAP_SHARED)
	if err == nil {
		adviseSequential(m)
	}
	return m, err
}

func unmap(m []byte) { syscall.Munmap(m) }
