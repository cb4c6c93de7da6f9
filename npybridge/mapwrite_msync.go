//go:build linux || freebsd || dragonfly

package npybridge

import (
	"syscall"
	"unsafe"
)

// msync writes the dirty pages of the mapping b to the file: waiting for
// the disk (MS_SYNC) or only scheduling the writes (MS_ASYNC). The syscall
// package has no wrapper for it here.
func msync(b []byte, wait bool) error {
	flags := syscall.MS_ASYNC
	if wait {
		flags = syscall.MS_SYNC
	}
	_, _, e := syscall.Syscall(syscall.SYS_MSYNC, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(flags))
	if e != 0 {
		return e
	}
	return nil
}

const haveMsync = true
