//go:build unix

package connset

import "syscall"

// openFileLimit returns the process's soft limit on open files, 0 if it
// cannot tell.
func openFileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
