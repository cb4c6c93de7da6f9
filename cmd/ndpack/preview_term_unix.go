//go:build linux || darwin

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalColumns returns the width of the terminal f is, or 0.
func terminalColumns(f *os.File) int {
	var ws struct{ rows, cols, xpixel, ypixel uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.cols)
}
