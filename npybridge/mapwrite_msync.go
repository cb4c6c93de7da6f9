//go:build linux || freebsd || dragonfly

package npybridge

import (
	"syscall"
	"unsafe"
)

// msync writes the dirty pages of the mapping b to the file and waits for
// the writes (MS_SYNC). The syscall package has no wrapper for it here.
func msync(b []byte) error {
	_, _, e := syscall.Syscall(syscall.SYS_MSYNC, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), syscall.MS_SYNC)
	if e != 0 {
		return e
	}
	return nil
}

const haveMsync = true
