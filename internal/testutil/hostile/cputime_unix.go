//go:build unix

package hostile

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the process has used, user and system: what a
// bound on work should measure, since, unlike the wall clock, other
// processes on a loaded machine (CI runs packages side by side) do not
// stretch it.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
