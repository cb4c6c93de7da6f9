//go:build !linux

package filesection

import (
	"errors"
	"os"
)

// CopyRange would write n bytes of src from offset off to dst without
// the bytes passing through this process; only Linux has the splice(2)
// it needs, so here it fails with errors.ErrUnsupported, having written
// nothing, and the caller copies another way.
func CopyRange(dst, src *os.File, off int64, n int) (int, error) { return 0, errors.ErrUnsupported }
