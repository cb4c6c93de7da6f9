package npybridge

import (
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/ndarray"
)

// ReadInto reads an NPY file from r, as Read does, into buf when buf has
// the room for its data: the returned array's Data is then buf[:n], and
// nothing is allocated or zeroed for it. Otherwise the data goes to a new
// buffer, which the caller may pass next time (a.Data[:cap(a.Data)]).
//
// Go zeroes every allocation; reading file after file into one buffer
// saves that, which is most of what a read costs beyond the read itself
// (numpy's malloc hands back freed memory without clearing it). The
// caller must not use the earlier array once buf is read into again.
func ReadInto(r io.Reader, buf []byte) (*ndarray.Array, error) {
	return ReadOptions{}.ReadInto(r, buf)
}

// ReadFileInto reads the NPY file name, as ReadFile does, into buf when it
// is large enough; see ReadInto.
func ReadFileInto(name string, buf []byte) (*ndarray.Array, error) {
	return ReadOptions{}.ReadFileInto(name, buf)
}

// ReadInto is the package's ReadInto with these options.
func (o ReadOptions) ReadInto(r io.Reader, buf []byte) (*ndarray.Array, error) {
	h, err := o.ReadHeader(r)
	if err != nil {
		return nil, err
	}
	return o.inOrder(h.readArrayInto(sizedReader(r), buf, o.NativeOrder))
}

// ReadFileInto is the package's ReadFileInto with these options: the file's
// header is read, then its data straight into buf, sized from the header
// once.
func (o ReadOptions) ReadFileInto(name string, buf []byte) (*ndarray.Array, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := o.ReadInto(f, buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}
