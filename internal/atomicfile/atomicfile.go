// Package atomicfile writes a file so that readers see either the old file
// or the complete new one, never a half-written one, and replaces a file the
// way cp and editors do: through a symbolic link to its target, keeping the
// old file's mode and owner, refusing a file that is not writable.
//
// # Temporary files of writers that died
//
// The new file is written as ".NAME.ndpack-tmp-PID-RANDOM" beside NAME. A writer
// killed with SIGKILL (or by a power loss) cannot remove it, so Create
// removes such files from the directory it writes into, but only those whose
// writer is gone: each writer holds an exclusive flock(2) on its temporary
// file for as long as it has it, and the kernel drops the lock when the
// process dies, however it dies. A file is taken for stale only when its lock
// is free and, besides, either the process PID in its name no longer exists
// or the file has not been modified for StaleAge. The second condition
// covers the microseconds between a writer's creating its file and locking
// it, during which its lock is free but its process is running and its file
// new; it also keeps a recycled PID (or a zombie) from protecting a dead
// writer's file for more than StaleAge. The marker "ndpack-tmp" keeps the
// files of other programs (an editor's ".notes.txt.tmp-2024") out of it:
// only names of exactly this pattern
// are ever removed (a PID and a base-36 number), never a symbolic link, never
// a file replaced under that name between the check and the removal.
//
// A lock cannot tell apart two writers on different machines sharing a
// directory over NFS (flock there is emulated with byte-range locks, which a
// close of any descriptor releases): only local file systems are covered.
// Where flock does not exist (Windows), nothing is removed.
//
// Looking for such files reads the whole directory. In a crowded directory
// (one that reports a size of 64 KiB or more, a few thousand entries) on
// Linux, Create does it only when it has not been done for StaleAge, and
// records when it did in the directory's extended attribute
// "user.ndpack.swept", so that writing into a directory of 100,000 files
// costs what writing into an empty one does: a dead writer's file there is
// removed by the first Create at least StaleAge after the last look.
// RemoveStale always reads the whole directory.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// StaleAge is how long a temporary file must have gone unmodified, its lock
// free, before it is removed even though the process named in it exists: far
// longer than the moment a writer takes to lock the file it has created.
const StaleAge = time.Minute

// Errors about the destination, wrapped in an *os.PathError naming it as
// the caller did.
var (
	// ErrIsDir: the destination is a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrReadOnly: the destination exists and is not writable (no write
	// permission bit, or the caller may not write it): like cp, not
	// replaced.
	ErrReadOnly = errors.New("is read-only; make it writable or remove it first")
	// ErrNotRegular: the destination exists and is not a regular file (a
	// FIFO, a device, a socket): renaming over it would replace the node
	// itself, so it is never done; such destinations are written into
	// directly by the caller, as cp does.
	ErrNotRegular = errors.New("is not a regular file (a FIFO, a device or a socket), which renaming a new file over would replace; open it and write to it instead")
	// ErrNoDir: the destination's directory does not exist.
	ErrNoDir = errors.New("its directory does not exist")
	// ErrInUse: the destination is locked by a process writing it in place
	// (an npybridge Appender adding rows): replacing it would send that
	// writer's rows to a file no name leads to.
	ErrInUse = errors.New("is locked by a process writing it in place (an appender); replacing it would lose what that process writes")
)

// File is a file being written in place of a destination: a temporary
// file beside it, renamed over it by Commit, removed by Abort.
type File struct {
	*os.File
	name   string // the destination as the caller named it
	target string // where it is written: name, or what name links to
	// lock is a duplicate of the descriptor of File, holding its flock: the
	// lock is the open file's, so it lasts until both are closed, and File
	// can be closed (reporting a deferred write error, as NFS does) before
	// the rename while the temporary file is still seen as in use. Nil
	// where there are no locks.
	lock *os.File
	// held is the destination as it was, open and share-locked from Create
	// until the rename, so that no appender takes it meanwhile; nil when
	// there was none or there are no locks.
	held *os.File

	mu   sync.Mutex
	done bool
}

// Create starts writing name. If name is a symbolic link, its target is
// what gets replaced; if name exists, the new file gets its permission bits
// and, where the process may, its owner; otherwise perm less the umask. A
// directory, a missing directory or a file that is not writable is refused
// with an *os.PathError naming name.
//
// Create first removes, from the directory it writes into, the temporary
// files of writers that have died (see the package documentation).
func Create(name string, perm os.FileMode) (*File, error) {
	fail := func(err error) (*File, error) { return nil, &os.PathError{Op: "write", Path: name, Err: err} }
	target, err := resolve(name)
	if err != nil {
		return fail(err)
	}
	old, err := os.Stat(target)
	switch {
	case err == nil && old.IsDir():
		return fail(ErrIsDir)
	case err == nil && !old.Mode().IsRegular():
		return fail(ErrNotRegular)
	case err == nil && (old.Mode().Perm()&0o222 == 0 || !mayWrite(target)):
		return fail(ErrReadOnly)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fail(err)
	}
	dir := filepath.Dir(target)
	dirInfo, err := os.Stat(dir)
	if err != nil || !dirInfo.IsDir() {
		return fail(ErrNoDir)
	}
	var held *os.File
	if old != nil && old.Mode().IsRegular() {
		if held, err = holdShared(target); err != nil {
			return fail(err)
		}
	}
	if now := time.Now(); sweepDue(dir, dirInfo, now) {
		RemoveStale(dir)
		markSwept(dir, dirInfo, now)
	}
	f, lock, err := createTemp(target, perm)
	if err != nil {
		if held != nil {
			held.Close()
		}
		if errors.Is(err, fs.ErrPermission) {
			return fail(fmt.Errorf("cannot create a file in %s: permission denied", dir))
		}
		// The temporary's name is no name the caller gave: say where it
		// was to be (a directory such as /proc takes no new file).
		return fail(fmt.Errorf("cannot create a file in %s: %w", dir, bareError(err)))
	}
	if old != nil {
		// os.Chmod, unlike the mode given to open, is not cut by the umask:
		// the replacement has exactly the old file's bits.
		f.Chmod(old.Mode().Perm())
		keepOwner(f, old)
	}
	return &File{File: f, name: name, target: target, lock: lock, held: held}, nil
}

// resolve follows name through symbolic links to the file to replace,
// which need not exist yet.
func resolve(name string) (string, error) {
	target := name
	for range 40 {
		fi, err := os.Lstat(target)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return target, nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(target), link)
		}
		target = link
	}
	return "", errors.New("too many levels of symbolic links")
}

// Commit closes the file and renames it over the destination. After a
// failure the temporary file is removed.
func (f *File) Commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return &os.PathError{Op: "write", Path: f.name, Err: os.ErrClosed}
	}
	f.done = true
	defer f.unlock() // after the rename or the removal: never seen unlocked
	err := f.File.Close()
	if err == nil {
		err = os.Rename(f.File.Name(), f.target)
	}
	if err != nil {
		os.Remove(f.File.Name())
		return &os.PathError{Op: "write", Path: f.name, Err: bareError(err)}
	}
	return nil
}

// bareError is err without the temporary file's name, which an
// *os.PathError or *os.LinkError of an operation on it carries: errors
// name the file the caller gave.
func bareError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// CommitNew gives the file the destination's name only if no file has that
// name yet: it links it there (link(2), which never replaces a file, where
// Commit's rename would) and removes the temporary name. Unlike Commit it
// leaves f.File open, for a caller that goes on writing the file under its
// new name, and that must close f.File itself; until then the file keeps
// the exclusive flock its writer held, which a caller may count on.
//
// If the destination exists the error wraps fs.ErrExist. On any failure the
// temporary file is removed and f.File closed. Where the file system has no
// hard links (FAT) the error is the link's, and the caller can fall back
// to creating the destination itself.
func (f *File) CommitNew() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return &os.PathError{Op: "write", Path: f.name, Err: os.ErrClosed}
	}
	f.done = true
	defer f.unlock() // f.File, still open on success, keeps the lock
	err := os.Link(f.File.Name(), f.target)
	os.Remove(f.File.Name())
	if err != nil {
		f.File.Close()
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return nil
}

// Abort closes and removes the temporary file, leaving the destination as it
// was. It may be called at any time, from any goroutine (a signal handler),
// and more than once; after Commit it does nothing.
func (f *File) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
	f.unlock()
}

func (f *File) unlock() {
	if f.lock != nil {
		f.lock.Close()
		f.lock = nil
	}
	if f.held != nil {
		f.held.Close()
		f.held = nil
	}
}

// Write creates name through Create, lets fill write to it, and commits it
// only if fill succeeds; on any failure the destination is left as it was.
//
// No process ever sees a half-written name. The file is not fsynced: that
// would guard against power loss, not program failure, and measured it
// doubled the time of a 64 MiB conversion (cp does not sync either).
func Write(name string, perm os.FileMode, fill func(f *os.File) error) error {
	f, err := Create(name, perm)
	if err != nil {
		return err
	}
	if err := fill(f.File); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// createTemp creates a new file beside name, named as RemoveStale expects,
// and locks it; lock is the duplicate descriptor that holds the lock (nil
// where there are no locks). Unlike os.CreateTemp (always 0600) it opens
// with perm, so the kernel applies the umask.
func createTemp(name string, perm os.FileMode) (f, lock *os.File, err error) {
	dir, base := filepath.Split(name)
	for range 100 {
		tmp := filepath.Join(dir, tempName(base, os.Getpid(), rand.Uint64()))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		lock, err := lockTemp(f)
		if err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, nil, fmt.Errorf("locking a temporary file: %w", bareError(err))
		}
		return f, lock, nil
	}
	return nil, nil, fmt.Errorf("cannot create a temporary file beside %s", name)
}

const tempMark = ".ndpack-tmp-"

// tempName is the name of a temporary file for base written by process pid.
func tempName(base string, pid int, n uint64) string {
	return "." + base + tempMark + strconv.Itoa(pid) + "-" + strconv.FormatUint(n, 36)
}

// parseTemp returns the pid in name if name is exactly a name tempName
// makes (what a strconv would not print, such as a leading zero, is not),
// else 0.
func parseTemp(name string) int {
	i := strings.LastIndex(name, tempMark)
	if len(name) < 2 || name[0] != '.' || i < 2 {
		return 0
	}
	pidText, random, ok := strings.Cut(name[i+len(tempMark):], "-")
	if !ok || len(random) == 0 || len(random) > 13 {
		return 0
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != pidText {
		return 0
	}
	n, err := strconv.ParseUint(random, 36, 64)
	if err != nil || strconv.FormatUint(n, 36) != random {
		return 0
	}
	return pid
}

// RemoveStale removes from dir the temporary files that writers which have
// died left there (see the package documentation) and returns their names.
// It is best effort: a file it cannot open, lock or remove is left.
func RemoveStale(dir string) []string {
	if !canLock {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	var removed []string
	for {
		names, err := d.Readdirnames(1024)
		for _, name := range names {
			if pid := parseTemp(name); pid != 0 && removeIfStale(filepath.Join(dir, name), pid) {
				removed = append(removed, name)
			}
		}
		if err != nil {
			return removed
		}
	}
}
