package npybridge

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/ndarray"
)

// NamedArray is one array of an .npz archive.
type NamedArray struct {
	Name  string // the member name without ".npy", e.g. "arr_0"
	Array *ndarray.Array
}

// ReadNPZ reads every array of an .npz archive (np.savez stores its
// members, np.savez_compressed deflates them) of size bytes, in archive
// order. Each member must be a NAME.npy file whose decompressed size is
// exactly what its NPY header declares: more is refused (a zip bomb or
// hidden data), less is truncation.
func (o ReadOptions) ReadNPZ(r io.ReaderAt, size int64) ([]NamedArray, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("npybridge: npz: %w", err)
	}
	var out []NamedArray
	seen := map[string]bool{}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue // a folder entry
		}
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, errAt(ErrUnsupported, -1, "npz member %q is not a .npy file", f.Name)
		}
		if seen[name] {
			return nil, errAt(ErrHeader, -1, "npz member %q appears twice", f.Name)
		}
		seen[name] = true
		a, err := o.readMember(f)
		if err != nil {
			return nil, fmt.Errorf("npz member %q: %w", f.Name, err)
		}
		out = append(out, NamedArray{name, a})
	}
	return out, nil
}

func (o ReadOptions) readMember(f *zip.File) (*ndarray.Array, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h, err := o.ReadHeader(rc)
	if err != nil {
		return nil, err
	}
	if declared := h.DataOffset + h.DataLen(); f.UncompressedSize64 > uint64(declared) {
		return nil, errAt(ErrHeader, -1, "the member decompresses to %d bytes, its NPY header declares %d", f.UncompressedSize64, declared)
	}
	data, err := boundedio.ReadFull(rc, int(h.DataLen()))
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, errAt(ErrTruncated, h.DataOffset, "the header announces %d data bytes, the member has %d", h.DataLen(), len(data))
	}
	if err != nil {
		return nil, err
	}
	// Reading on to the end checks the CRC, and that nothing follows.
	if n, err := io.Copy(io.Discard, io.LimitReader(rc, 1)); n != 0 || err != nil {
		if err == nil {
			err = errAt(ErrHeader, -1, "the member holds more bytes than its NPY header declares")
		}
		return nil, err
	}
	return h.arrayFrom(data)
}

// ReadNPZFile reads the .npz archive name.
func (o ReadOptions) ReadNPZFile(name string) ([]NamedArray, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	arrays, err := o.ReadNPZ(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return arrays, nil
}

// ReadNPZ reads an .npz archive with the default options.
func ReadNPZ(r io.ReaderAt, size int64) ([]NamedArray, error) { return ReadOptions{}.ReadNPZ(r, size) }

// ReadNPZFile reads the .npz archive name with the default options.
func ReadNPZFile(name string) ([]NamedArray, error) { return ReadOptions{}.ReadNPZFile(name) }

// npzTime is the modification time of written members: fixed, so that the
// same arrays always make the same archive.
var npzTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteNPZ writes arrays as an .npz archive that np.load reads: members
// NAME.npy, stored like np.savez or, with compress, deflated like
// np.savez_compressed.
func WriteNPZ(w io.Writer, arrays []NamedArray, compress bool) error {
	zw := zip.NewWriter(w)
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	seen := map[string]bool{}
	for _, na := range arrays {
		if na.Name == "" || seen[na.Name] {
			return fmt.Errorf("npybridge: npz: array name %q is empty or repeated", na.Name)
		}
		seen[na.Name] = true
		if err := na.Array.Validate(); err != nil {
			return fmt.Errorf("npybridge: npz: array %q: %w", na.Name, err)
		}
		mw, err := zw.CreateHeader(&zip.FileHeader{Name: na.Name + ".npy", Method: method, Modified: npzTime})
		if err != nil {
			return err
		}
		if err := Write(mw, na.Array); err != nil {
			return err
		}
	}
	return zw.Close()
}

// WriteNPZFile writes arrays as the .npz archive name, atomically.
func WriteNPZFile(name string, arrays []NamedArray, compress bool) error {
	return atomicfile.Write(name, 0o666, func(f *os.File) error { return WriteNPZ(f, arrays, compress) })
}
