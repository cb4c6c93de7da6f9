package filesection

import (
	"errors"
	"os"
	"syscall"
)

// pipeSize is the pipe CopyRange asks for: a splice moves at most a
// pipe's worth, and the default 64 KiB would take sixteen times the
// system calls.
const pipeSize = 1 << 20

// fSetPipeSize is F_SETPIPE_SZ, which package syscall does not name.
const fSetPipeSize = 1031

// CopyRange writes n bytes of src, read from offset off, to dst at its
// current position, without the bytes passing through this process:
// splice(2) moves references to src's cached pages into a pipe, and from
// the pipe into dst, the one copy cp's copy_file_range makes too. It
// returns the bytes written; fewer than n with a nil error when src ends
// first. It fails with errors.ErrUnsupported, having written nothing,
// when the files cannot be spliced (dst opened for appending, say); the
// caller then copies another way.
func CopyRange(dst, src *os.File, off int64, n int) (int, error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return 0, errors.ErrUnsupported
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	size := pipeSize
	if got, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(p[1]), fSetPipeSize, pipeSize); errno != 0 {
		size = 64 << 10 // the default, when the user's pipe quota is spent
	} else {
		size = int(got)
	}
	srcConn, err := src.SyscallConn()
	if err != nil {
		return 0, errors.ErrUnsupported
	}
	dstConn, err := dst.SyscallConn()
	if err != nil {
		return 0, errors.ErrUnsupported
	}
	written := 0
	for written < n {
		var in int
		var rerr error
		cerr := srcConn.Read(func(fd uintptr) bool {
			at := off + int64(written)
			in, rerr = splice(int(fd), &at, p[1], nil, min(n-written, size))
			return true
		})
		if rerr == nil {
			rerr = cerr
		}
		if rerr != nil {
			if written == 0 && unsupported(rerr) {
				return 0, errors.ErrUnsupported
			}
			return written, &os.PathError{Op: "read", Path: src.Name(), Err: rerr}
		}
		if in == 0 {
			return written, nil // src ended
		}
		for in > 0 {
			var out int
			var werr error
			cerr := dstConn.Write(func(fd uintptr) bool {
				out, werr = splice(p[0], nil, int(fd), nil, in)
				return true
			})
			if werr == nil {
				werr = cerr
			}
			if werr != nil {
				if written == 0 && unsupported(werr) {
					// What went into the pipe is dropped with it:
					// nothing reached dst.
					return 0, errors.ErrUnsupported
				}
				return written, &os.PathError{Op: "write", Path: dst.Name(), Err: werr}
			}
			in -= out
			written += out
		}
	}
	return written, nil
}

// splice is splice(2), asked again when a signal interrupts it.
func splice(rfd int, roff *int64, wfd int, woff *int64, n int) (int, error) {
	for {
		k, err := syscall.Splice(rfd, roff, wfd, woff, n, 0)
		if err != syscall.EINTR {
			return int(k), err
		}
	}
}

// unsupported reports whether err says these files cannot be spliced, as
// opposed to a failure of reading or writing them.
func unsupported(err error) bool {
	return err == syscall.EINVAL || err == syscall.ENOSYS || err == syscall.EBADF || err == syscall.EOPNOTSUPP
}
