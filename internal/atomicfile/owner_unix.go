//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// mayWrite reports whether the process may write path (root may write
// anything, but Create refuses files without write bits before asking).
func mayWrite(path string) bool { return syscall.Access(path, 2 /* W_OK */) == nil }

// keepOwner gives f the owner of old, where the process may (root); for
// others' files it fails, harmlessly, as cp's does.
func keepOwner(f *os.File, old os.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		f.Chown(int(st.Uid), int(st.Gid))
	}
}
