//go:build !unix

package hostile

import "time"

var start = time.Now()

// CPUTime is, where the process's CPU time cannot be read, the time since
// it started.
func CPUTime() time.Duration { return time.Since(start) }
