//go:build !(linux || freebsd || dragonfly)

package npybridge

import "errors"

// Where the syscall package cannot reach msync (darwin, the other BSDs,
// Windows), Flush syncs the file descriptor instead: with a unified buffer
// cache, fsync writes the mapping's dirty pages too.
func msync([]byte, bool) error { return errors.New("msync is not available") }

const haveMsync = false
