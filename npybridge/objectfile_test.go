package npybridge

import (
	"fmt"
	"os"

	"github.com/ndpack/ndpack/internal/atomicfile"
)

// readObjectsFile reads the NPY file name, which holds an object array;
// see ReadObjects.
func (o ReadOptions) readObjectsFile(name string) (*ObjectArray, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := o.ReadObjects(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}

// writeObjectsFile writes the object array a as the NPY file name,
// atomically, as WriteFile writes an array.
func writeObjectsFile(name string, a *ObjectArray) error {
	b, err := AppendObjects(nil, a)
	if err != nil {
		return err
	}
	return atomicfile.Write(name, 0o666, func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}
