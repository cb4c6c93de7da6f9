package npybridge

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/ndarray"
)

// Read reads an NPY file from r: its header, then exactly the data the
// header announces (bytes after it are not read). A Fortran-order file is
// transposed, so the Array is always row-major with the file's logical
// shape. Memory grows only as data arrives, so a header that claims more
// than r holds fails without allocating the claim; if r reports its length
// (bytes.Reader, an *os.File) it fails before reading any data.
// It fails as ReadHeader does, with an *ndarray.Error wrapping ndarray.ErrTruncated when the
// data ends early, or with r's read error. An .npz (a zip archive) fails
// with ErrNotNPY, its message naming OpenNPZ, which reads one.
func (o ReadOptions) Read(r io.Reader) (*ndarray.Array, error) { return o.read(r, "OpenNPZ") }

// read is Read, whose error for a zip archive names npzCall (readHeader).
func (o ReadOptions) read(r io.Reader, npzCall string) (*ndarray.Array, error) {
	h, err := o.readHeader(r, false, npzCall)
	if err != nil {
		return nil, err
	}
	// A file, which says how much it holds, is read into one buffer of
	// the data's size, a Fortran-order one transposed as it arrives.
	return o.inOrder(h.readArrayInto(sizedReader(r), nil, o.NativeOrder))
}

// inOrder applies NativeOrder to an array just read into memory of its
// own.
func (o ReadOptions) inOrder(a *ndarray.Array, err error) (*ndarray.Array, error) {
	if err != nil || !o.NativeOrder {
		return a, err
	}
	if err := a.SetOrder(ndarray.NativeOrder()); err != nil {
		return nil, err
	}
	return a, nil
}

// ReadFile reads the NPY file name.
// It fails with os.Open's error, or with Read's error prefixed with name;
// for an .npz, it names OpenNPZFile.
func (o ReadOptions) ReadFile(name string) (*ndarray.Array, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := o.read(f, "OpenNPZFile")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}

// Read reads an NPY file from r with the zero ReadOptions:
// ReadOptions{}.Read, beside Write. It fails as that does.
func Read(r io.Reader) (*ndarray.Array, error) { return ReadOptions{}.Read(r) }

// ReadFile reads the NPY file name with the zero ReadOptions:
// ReadOptions{}.ReadFile, beside WriteFile. It fails as that does.
func ReadFile(name string) (*ndarray.Array, error) { return ReadOptions{}.ReadFile(name) }

// OpenNPZ opens the .npz archive of size bytes that r holds with the zero
// ReadOptions: ReadOptions{}.OpenNPZ, beside NewNPZWriter. It fails as
// that does.
func OpenNPZ(r io.ReaderAt, size int64) (*NPZ, error) { return ReadOptions{}.OpenNPZ(r, size) }

// OpenNPZFile opens the .npz archive name with the zero ReadOptions:
// ReadOptions{}.OpenNPZFile, beside WriteNPZFile. Close it when done. It
// fails as that does.
func OpenNPZFile(name string) (*NPZ, error) { return ReadOptions{}.OpenNPZFile(name) }

// readData reads the data that follows the header h from r.
func (h *Header) readData(r io.Reader) (*ndarray.Array, error) {
	n := h.DataLen()
	data, err := boundedio.ReadFull(r, int(n))
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errAt(ndarray.ErrTruncated, h.DataOffset, "the header announces %d data bytes (shape %s of %s), the file has %s",
				n, ndarray.FormatShape(h.Shape), h.DType, haveBytes(r, len(data)))
		}
		return nil, err
	}
	return h.arrayFrom(data)
}

// arrayFrom makes the row-major Array of h from its data as stored.
func (h *Header) arrayFrom(data []byte) (*ndarray.Array, error) {
	if h.FortranOrder && len(h.Shape) > 1 {
		return ndarray.FromColumnMajor(h.DType, h.Shape, data)
	}
	return ndarray.New(h.DType, h.Shape, data)
}

func haveBytes(r io.Reader, got int) string {
	if l, ok := r.(interface{ Len() int }); ok && got == 0 {
		return fmt.Sprintf("%d", l.Len())
	}
	return fmt.Sprintf("only %d", got)
}

// sizedReader gives a file the Len method boundedio uses to refuse a claim
// larger than the file at once.
func sizedReader(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return r
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return r
	}
	return &fileWithLen{f, pos, fi.Size() - pos}
}

// fileWithLen is a regular file with what was known of it when wrapped:
// the read position and the bytes left from there.
type fileWithLen struct {
	*os.File
	pos, left int64
}

func (f *fileWithLen) Len() int { return int(max(0, f.left)) }
