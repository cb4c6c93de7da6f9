//go:build unix

package main

import (
	"os"
	"syscall"
)

// peakRSS is the most memory the finished process ps held, in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	return ps.SysUsage().(*syscall.Rusage).Maxrss * 1024 // Linux counts KiB
}
