//go:build !unix

package atomicfile

import (
	"context"
	"os"
)

// Without flock, a temporary file cannot tell whether its writer is alive:
// none is removed.
const canLock = false

func lockTemp(*os.File) (*os.File, error) { return nil, nil }

func removeIfStale(string, int) bool { return false }

// TryLock would take an exclusive flock(2) on f; this platform has none,
// so it reports true and locks nothing.
func TryLock(*os.File) (bool, error) { return true, nil }

// Lock would take an exclusive flock(2) on f; this platform has none, so
// it returns at once and locks nothing.
func Lock(context.Context, *os.File) error { return nil }

// holdShared would take a shared flock(2) on name; this platform has none.
func holdShared(string) (*os.File, error) { return nil, nil }
