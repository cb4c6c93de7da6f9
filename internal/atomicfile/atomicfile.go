// Package atomicfile writes a file so that readers see either the old file
// or the complete new one, never a half-written one.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Write creates a temporary file in the folder of name, lets fill write to
// it, and renames it to name only if fill and close succeed. On any failure
// the temporary file is removed and an existing file at name is left
// untouched. The new file is created with mode perm, less the process umask,
// as os.Create would.
//
// No process ever sees a half-written name. The file is not fsynced: that
// would guard against power loss, not program failure, and measured it
// doubled the time of a 64 MiB conversion (cp does not sync either).
func Write(name string, perm os.FileMode, fill func(f *os.File) error) (err error) {
	f, err := createTemp(name, perm)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// createTemp creates a new file beside name. Unlike os.CreateTemp (always
// 0600) it opens with perm, so the kernel applies the umask.
func createTemp(name string, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(name)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("cannot create a temporary file beside %s", name)
}
