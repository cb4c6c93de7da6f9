//go:build !linux

package atomicfile

import (
	"os"
	"time"
)

// sweepDue is always true where directories have no attribute to record
// the last look in: every Create looks through the directory.
func sweepDue(dir string, fi os.FileInfo, now time.Time) bool { return true }

func markSwept(dir string, fi os.FileInfo, now time.Time) {}
