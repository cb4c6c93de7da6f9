package atomicfile

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

// crowdedDirSize is the size a directory reports (st_size) from which
// Create looks for dead writers' temporary files only once every StaleAge:
// a few thousand entries on ext4, xfs, btrfs and tmpfs alike, where reading
// the whole directory starts to cost more than writing a file. Smaller
// directories are looked through on every Create, as before.
const crowdedDirSize = 64 << 10

// sweptAttr is the extended attribute of a crowded directory that holds
// when Create last looked through it (nanoseconds since 1970, in decimal).
const sweptAttr = "user.ndpack.swept"

// sweepDue reports whether Create should look through dir, whose Stat is
// fi, for dead writers' temporary files: always, unless dir is crowded and
// its sweptAttr says it was looked through less than StaleAge ago (a time
// in the future, from a clock set back, does not count). Where the
// attribute cannot be read (a file system without user attributes) it is
// always due.
func sweepDue(dir string, fi os.FileInfo, now time.Time) bool {
	if fi.Size() < crowdedDirSize {
		return true
	}
	var buf [24]byte
	n, err := syscall.Getxattr(dir, sweptAttr, buf[:])
	if err != nil || n <= 0 {
		return true
	}
	ns, err := strconv.ParseInt(string(buf[:n]), 10, 64)
	if err != nil {
		return true
	}
	since := now.Sub(time.Unix(0, ns))
	return since < 0 || since >= StaleAge
}

// markSwept records in a crowded dir that it was looked through at now;
// best effort (a directory the process may not set attributes on is looked
// through every time).
func markSwept(dir string, fi os.FileInfo, now time.Time) {
	if fi.Size() < crowdedDirSize {
		return
	}
	syscall.Setxattr(dir, sweptAttr, []byte(strconv.FormatInt(now.UnixNano(), 10)), 0)
}
