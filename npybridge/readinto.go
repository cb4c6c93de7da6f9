package npybridge

import (
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/ndarray"
)

// ReadInto is the package's ReadInto with these options.
// It fails as Read does.
func (o ReadOptions) ReadInto(r io.Reader, buf []byte) (*ndarray.Array, error) {
	return o.readInto(r, buf, "OpenNPZ")
}

// readInto is ReadInto, whose error for a zip archive names npzCall
// (readHeader).
func (o ReadOptions) readInto(r io.Reader, buf []byte, npzCall string) (*ndarray.Array, error) {
	h, err := o.readHeader(r, false, npzCall)
	if err != nil {
		return nil, err
	}
	return o.inOrder(h.readArrayInto(sizedReader(r), buf, o.NativeOrder))
}

// ReadFileInto is the package's ReadFileInto with these options: the file's
// header is read, then its data straight into buf, sized from the header
// once.
// It fails with os.Open's error, or with Read's error prefixed with name.
func (o ReadOptions) ReadFileInto(name string, buf []byte) (*ndarray.Array, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := o.readInto(f, buf, "OpenNPZFile")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}
