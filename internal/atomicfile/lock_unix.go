//go:build unix

package atomicfile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

const canLock = true

// lockTemp locks a file just created and returns a duplicate of its
// descriptor, which holds the lock with it. It waits for the lock: only a
// RemoveStale deciding about the file can hold it, for a moment.
func lockTemp(f *os.File) (*os.File, error) {
	fd, err := dupCloexec(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	lock := os.NewFile(uintptr(fd), f.Name())
	if err := Lock(context.Background(), lock); err != nil {
		lock.Close()
		return nil, err
	}
	return lock, nil
}

// dupCloexec duplicates fd, close-on-exec so that no child process
// inherits the lock, as os does for its own descriptors.
func dupCloexec(fd int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	nfd, err := syscall.Dup(fd)
	if err != nil {
		return -1, os.NewSyscallError("dup", err)
	}
	syscall.CloseOnExec(nfd)
	return nfd, nil
}

// removeIfStale removes path, a temporary file of process pid, if its
// writer is gone, and reports whether it did.
func removeIfStale(path string, pid int) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if processExists(pid) && time.Since(fi.ModTime()) < StaleAge {
		return false // a live writer, or one about to lock its new file
	}
	// O_NONBLOCK: should a FIFO appear under the name, opening it must
	// not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close() // after the removal: the lock is held until then
	if ok, err := TryLock(f); err != nil || !ok {
		return false
	}
	held, err := f.Stat()
	if err != nil || !held.Mode().IsRegular() {
		return false
	}
	if now, err := os.Lstat(path); err != nil || !os.SameFile(held, now) {
		return false // replaced since it was opened
	}
	return os.Remove(path) == nil
}

// processExists reports whether a process pid exists (for another user's
// process, too: EPERM says it exists). On Linux a zombie, dead but not yet
// reaped by its parent, does not count: its files are closed, its locks
// released.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if runtime.GOOS == "linux" {
		// /proc/PID/stat: "PID (COMM) STATE ...", COMM any bytes.
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if i := bytes.LastIndexByte(b, ')'); err == nil && i >= 0 && i+2 < len(b) {
			return b[i+2] != 'Z' && b[i+2] != 'X'
		}
	}
	return true
}

// TryLock takes an exclusive flock(2) on f without waiting: it reports
// false if another open file description (of this process or another)
// holds a lock on the file. The lock is f's open file description's: it is
// released when every descriptor of it is closed, and when the process
// dies. Where there are no locks (Windows) it reports true and locks
// nothing.
func TryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			return false, os.NewSyscallError("flock", err)
		}
	}
}

// Lock takes an exclusive flock(2) on f, as TryLock does, waiting for it
// until ctx is done. Without a deadline or cancellation it sleeps in the
// kernel until the holder lets go; otherwise it polls, at most every 50
// ms, since a flock that waits cannot be interrupted.
func Lock(ctx context.Context, f *os.File) error {
	if ctx.Done() == nil {
		for {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
			if !errors.Is(err, syscall.EINTR) {
				return os.NewSyscallError("flock", err)
			}
		}
	}
	pause := time.Millisecond
	for {
		ok, err := TryLock(f)
		if ok || err != nil {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// holdShared opens the regular file name and takes a shared flock(2) on it
// without waiting, so that no process takes the exclusive lock an appender
// holds while it is being replaced; it fails with ErrInUse if one holds it
// now. The caller closes the returned file to let go. A file that cannot be
// opened for reading is not held: replacing it needs no read.
func holdShared(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		switch {
		case err == nil:
			return f, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, ErrInUse
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			f.Close()
			return nil, nil // a file system without locks: nothing to hold
		}
	}
}
