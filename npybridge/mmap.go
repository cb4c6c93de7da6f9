package npybridge

import (
	"os"

	"github.com/ndpack/ndpack/ndarray"
)

// Mapped is an NPY file opened for reading with its data memory-mapped:
// Array.Data aliases the file's pages and nothing is copied, so opening
// costs the same whatever the size. The mapping is read-only: writing to
// Array.Data faults. Close unmaps; the Array must not be used after.
//
// A Fortran-order file cannot be viewed row-major in place: for it (with
// two or more dimensions) OpenMapped reads and transposes the data into
// ordinary memory, as Read does, and Aliased reports false. So do platforms
// without mmap.
type Mapped struct {
	Array   *ndarray.Array
	Header  *Header
	mapping []byte // nil when nothing is mapped
}

// OpenMapped opens the NPY file name with the default options. See
// ReadOptions.OpenMapped.
func OpenMapped(name string) (*Mapped, error) { return ReadOptions{}.OpenMapped(name) }

// OpenMapped opens the NPY file name, checks its header and size, and maps
// its data read-only.
func (o ReadOptions) OpenMapped(name string) (*Mapped, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close() // a mapping outlives its descriptor
	h, err := o.ReadHeader(f)
	if err != nil {
		return nil, fileError(name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if end := h.DataOffset + h.DataLen(); fi.Size() < end {
		return nil, fileError(name, errAt(ErrTruncated, h.DataOffset, "the header announces %d data bytes, the file has %d",
			h.DataLen(), max(0, fi.Size()-h.DataOffset)))
	}
	if (h.FortranOrder && len(h.Shape) > 1) || h.DataLen() == 0 || !canMap {
		a, err := h.readData(sizedReader(f))
		if err != nil {
			return nil, fileError(name, err)
		}
		return &Mapped{Array: a, Header: h}, nil
	}
	m, err := mapFile(f, int(h.DataOffset+h.DataLen()))
	if err != nil {
		return nil, fileError(name, err)
	}
	a, err := ndarray.New(h.DType, h.Shape, m[h.DataOffset:])
	if err != nil {
		unmap(m)
		return nil, fileError(name, err)
	}
	return &Mapped{Array: a, Header: h, mapping: m}, nil
}

// Aliased reports whether Array.Data is the file's mapped pages (true) or a
// copy in ordinary memory (false).
func (m *Mapped) Aliased() bool { return m.mapping != nil }

// Close unmaps the file. It is safe to call more than once.
func (m *Mapped) Close() error {
	if m.mapping == nil {
		return nil
	}
	err := unmap(m.mapping)
	m.mapping = nil
	m.Array = nil
	return err
}

func fileError(name string, err error) error {
	return &os.PathError{Op: "open", Path: name, Err: err}
}
