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

// NPZ is an .npz archive opened for reading one member at a time, as
// numpy's np.load reads archives: opening reads the zip directory only, and
// each member is decoded when it is asked for. A member that is not an
// array ndpack holds (a text file, a structured or object array) fails only
// when it is read, not the archive.
type NPZ struct {
	opts    ReadOptions
	names   []string
	members map[string]*zip.File
	size    int64    // of the archive
	file    *os.File // of OpenNPZFile, for OpenMapped
}

// OpenNPZ opens the .npz archive of size bytes that r holds, with the
// default options.
func OpenNPZ(r io.ReaderAt, size int64) (*NPZ, error) { return ReadOptions{}.OpenNPZ(r, size) }

// OpenNPZFile opens the .npz archive name, with the default options. Close
// it when done.
func OpenNPZFile(name string) (*NPZ, error) { return ReadOptions{}.OpenNPZFile(name) }

// OpenNPZ opens the .npz archive of size bytes that r holds. It reads the
// zip directory and nothing else; r must stay readable while the NPZ is in
// use.
func (o ReadOptions) OpenNPZ(r io.ReaderAt, size int64) (*NPZ, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, errAt(ErrNotNPZ, -1, "%v", strings.TrimPrefix(err.Error(), "zip: "))
	}
	z := &NPZ{opts: o, members: map[string]*zip.File{}, size: size}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue // a folder entry
		}
		// np.load names members without ".npy"; other files keep their
		// whole name.
		name := strings.TrimSuffix(f.Name, ".npy")
		if z.members[name] != nil {
			return nil, errAt(ErrNotNPZ, -1, "member %q appears twice", f.Name)
		}
		z.members[name] = f
		z.names = append(z.names, name)
	}
	return z, nil
}

// OpenNPZFile opens the .npz archive name. Close it when done.
func (o ReadOptions) OpenNPZFile(name string) (*NPZ, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	z, err := o.OpenNPZ(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "read", Path: name, Err: err}
	}
	z.file = f
	return z, nil
}

// Close closes the file of an archive opened with OpenNPZFile; for one
// opened with OpenNPZ it does nothing. Mapped members stay valid until
// they are closed themselves.
func (z *NPZ) Close() error {
	if z.file == nil {
		return nil
	}
	err := z.file.Close()
	z.file = nil
	return err
}

// OpenMapped maps the data of the member called name read-only, as
// OpenMapped does for an .npy file: nothing is copied and opening costs the
// same whatever the size. Only a member of an archive opened with
// OpenNPZFile can be mapped, and only when it is stored (np.savez, not
// np.savez_compressed), in C order, and its data lies at a file offset
// aligned for its items; otherwise ErrNotMappable says why (Read still
// reads it). np.savez usually leaves data misaligned; archives ndpack writes
// align it.
func (z *NPZ) OpenMapped(name string) (*Mapped, error) {
	f, err := z.member(name)
	if err != nil {
		return nil, err
	}
	h, err := z.Header(name)
	if err != nil {
		return nil, err
	}
	notMappable := func(format string, args ...any) (*Mapped, error) {
		return nil, memberError(name, errAt(ErrNotMappable, -1, format, args...))
	}
	switch {
	case z.file == nil:
		return notMappable("the archive was not opened from a file (OpenNPZFile)")
	case f.Method != zip.Store:
		return notMappable("the member is compressed; only stored members can be mapped")
	case h.FortranOrder && len(h.Shape) > 1:
		return notMappable("the member is in Fortran order, which cannot be viewed row-major in place")
	case !canMap:
		return notMappable("mmap is not available on this platform")
	}
	start, err := f.DataOffset()
	if err != nil {
		return nil, memberError(name, err)
	}
	off := start + h.DataOffset
	if align := int64(itemAlignment(h.DType)); off%align != 0 {
		return notMappable("its data starts at file offset %d, not a multiple of %d as %s items need", off, align, h.DType)
	}
	if h.DataLen() == 0 {
		a, err := ndarray.New(h.DType, h.Shape, nil)
		return &Mapped{Array: a, Header: h}, err
	}
	m, data, err := mapSection(z.file, off, int(h.DataLen()))
	if err != nil {
		return nil, memberError(name, err)
	}
	a, err := ndarray.New(h.DType, h.Shape, data)
	if err != nil {
		unmap(m)
		return nil, memberError(name, err)
	}
	return &Mapped{Array: a, Header: h, mapping: m}, nil
}

// storedInArchive reports whether f is stored (not compressed) and its bytes
// lie within the archive, so that its size can be trusted.
func (z *NPZ) storedInArchive(f *zip.File) bool {
	off, err := f.DataOffset()
	return err == nil && f.Method == zip.Store && f.CompressedSize64 == f.UncompressedSize64 &&
		uint64(off)+f.CompressedSize64 <= uint64(z.size)
}

// itemAlignment is the alignment Go wants for the elements of dt, as typed
// access (ndarray.Values) uses them without a copy.
func itemAlignment(dt ndarray.DType) int {
	switch dt.Kind {
	case ndarray.Bytes, ndarray.Void:
		return 1
	case ndarray.Unicode:
		return 4
	case ndarray.Complex:
		return min(dt.ItemSize/2, 8)
	}
	return min(max(dt.ItemSize, 1), 8)
}

// Names returns the members' names in archive order, as np.load lists them:
// "image" for the member image.npy, other files under their whole name.
func (z *NPZ) Names() []string { return append([]string{}, z.names...) }

// member returns the .npy file of the member called name.
func (z *NPZ) member(name string) (*zip.File, error) {
	f := z.members[name]
	if f == nil {
		return nil, errAt(ErrNoMember, -1, "no member %q (the archive holds %s)", name, strings.Join(z.names, ", "))
	}
	if !strings.HasSuffix(f.Name, ".npy") {
		return nil, errAt(ErrNotArray, -1, "member %q is not a NAME.npy file", f.Name)
	}
	return f, nil
}

// Header reads the NPY header of the member called name, decompressing only
// as far as the header.
func (z *NPZ) Header(name string) (*Header, error) {
	f, err := z.member(name)
	if err != nil {
		return nil, err
	}
	rc, err := f.Open()
	if err != nil {
		return nil, memberError(name, err)
	}
	defer rc.Close()
	h, err := z.opts.ReadHeader(rc)
	if err != nil {
		return nil, memberError(name, err)
	}
	return h, nil
}

// Open returns the NPY header of the member called name and a reader of its
// data bytes as stored (column-major when Header.FortranOrder), which
// decompresses as it is read: a member of any size is read in bounded
// memory. The reader fails with ErrTruncated if the member ends early;
// close it when done.
func (z *NPZ) Open(name string) (*Header, io.ReadCloser, error) {
	f, err := z.member(name)
	if err != nil {
		return nil, nil, err
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, memberError(name, err)
	}
	h, err := z.opts.ReadHeader(rc)
	if err != nil {
		rc.Close()
		return nil, nil, memberError(name, err)
	}
	if declared := h.DataOffset + h.DataLen(); f.UncompressedSize64 > uint64(declared) {
		rc.Close()
		return nil, nil, memberError(name, errAt(ErrHeader, -1, "the member decompresses to %d bytes, its NPY header declares %d", f.UncompressedSize64, declared))
	}
	return h, &memberData{rc: rc, left: h.DataLen(), h: h, name: name}, nil
}

// memberData reads exactly a member's data bytes.
type memberData struct {
	rc   io.ReadCloser
	left int64
	h    *Header
	name string
}

func (m *memberData) Read(p []byte) (int, error) {
	if m.left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), m.left)]
	n, err := m.rc.Read(p)
	m.left -= int64(n)
	if err == io.EOF && m.left > 0 {
		return n, memberError(m.name, errAt(ErrTruncated, m.h.DataOffset, "the header announces %d data bytes, the member ends %d short", m.h.DataLen(), m.left))
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (m *memberData) Close() error { return m.rc.Close() }

// Read decodes the member called name, and no other. Its decompressed size
// must be exactly what its NPY header declares: more is refused (a zip bomb
// or hidden data), less is truncation.
func (z *NPZ) Read(name string) (*ndarray.Array, error) {
	f, err := z.member(name)
	if err != nil {
		return nil, err
	}
	a, err := z.readMember(f)
	if err != nil {
		return nil, memberError(name, err)
	}
	return a, nil
}

func memberError(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("member %q: %w", name, err)
}

// ReadNPZ reads every array of an .npz archive (np.savez stores its
// members, np.savez_compressed deflates them) of size bytes, in archive
// order. Any member that is not an array ndpack holds fails the whole read;
// OpenNPZ reads members one by one.
func (o ReadOptions) ReadNPZ(r io.ReaderAt, size int64) ([]NamedArray, error) {
	z, err := o.OpenNPZ(r, size)
	if err != nil {
		return nil, err
	}
	out := make([]NamedArray, 0, len(z.names))
	for _, name := range z.names {
		a, err := z.Read(name)
		if err != nil {
			return nil, err
		}
		out = append(out, NamedArray{name, a})
	}
	return out, nil
}

func (z *NPZ) readMember(f *zip.File) (*ndarray.Array, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h, err := z.opts.ReadHeader(rc)
	if err != nil {
		return nil, err
	}
	declared := h.DataOffset + h.DataLen()
	if f.UncompressedSize64 > uint64(declared) {
		return nil, errAt(ErrHeader, -1, "the member decompresses to %d bytes, its NPY header declares %d", f.UncompressedSize64, declared)
	}
	var data []byte
	if z.storedInArchive(f) && f.UncompressedSize64 == uint64(declared) {
		// The bytes are there in the archive: read them into an array
		// of the right size, with no growing.
		data = make([]byte, h.DataLen())
		var n int
		n, err = io.ReadFull(rc, data)
		data = data[:n]
	} else {
		// Compressed (or lying about its size): memory grows only as
		// bytes arrive, so a bomb cannot claim it all at once.
		data, err = boundedio.ReadFull(rc, int(h.DataLen()))
	}
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
		return nil, &os.PathError{Op: "read", Path: name, Err: err}
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
	z := NewNPZWriter(w, compress)
	for _, na := range arrays {
		if err := z.WriteArray(na.Name, na.Array); err != nil {
			return err
		}
	}
	return z.Close()
}

// NPZWriter writes an .npz archive one member at a time, each streamed into
// the archive as it is written, so that memory does not grow with the
// arrays. Archives over 4 GiB are written as zip64, which np.load reads.
type NPZWriter struct {
	zw     *zip.Writer
	count  *countWriter
	last   *countWriter // the member being written, nil before the first
	method uint16
	seen   map[string]bool
}

// countWriter counts the bytes of the archive written so far, so that
// members can be aligned.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// NewNPZWriter returns a writer of an archive to w, its members stored
// (np.savez) or, with compress, deflated (np.savez_compressed). Close it to
// finish the archive.
func NewNPZWriter(w io.Writer, compress bool) *NPZWriter {
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	c := &countWriter{w: w}
	return &NPZWriter{zw: zip.NewWriter(c), count: c, method: method, seen: map[string]bool{}}
}

// WriteArray adds a as the member NAME.npy.
func (z *NPZWriter) WriteArray(name string, a *ndarray.Array) error {
	if a == nil {
		return errAt(ErrInvalidArray, -1, "npz member %q is a nil *ndarray.Array", name)
	}
	if err := a.Validate(); err != nil {
		return memberError(name, wrapAt(ErrInvalidArray, -1, err))
	}
	mw, err := z.create(name)
	if err != nil {
		return err
	}
	return Write(mw, a)
}

// WriteFrom adds the member NAME.npy holding an array of dtype dt and the
// given shape whose row-major data is read from r, exactly as WriteFrom
// does for a file.
func (z *NPZWriter) WriteFrom(name string, dt ndarray.DType, shape []int, r io.Reader) error {
	if _, err := ndarray.ByteSize(dt, shape); err != nil {
		return memberError(name, wrapAt(ErrInvalidArray, -1, err))
	}
	mw, err := z.create(name)
	if err != nil {
		return err
	}
	return memberError(name, WriteFrom(mw, dt, shape, r))
}

func (z *NPZWriter) create(name string) (io.Writer, error) {
	if name == "" || z.seen[name] {
		return nil, errAt(ErrInvalidArray, -1, "npz member name %q is empty or repeated", name)
	}
	z.seen[name] = true
	fh := &zip.FileHeader{Name: name + ".npy", Method: z.method, Modified: npzTime}
	if z.method == zip.Store {
		// Pad the local header with an extra field (Android zipalign's ID)
		// so that the member's data starts at a multiple of 64 in the file:
		// with np.save's 64-byte header, the array then starts aligned,
		// and NPZ.OpenMapped can map it.
		if err := z.zw.Flush(); err != nil {
			return nil, err
		}
		// The local header, the name, archive/zip's extended-timestamp
		// field (for Modified), then ours.
		const localHeader, timeExtra, extraHeader = 30, 9, 4
		at := z.count.n + localHeader + int64(len(fh.Name)) + timeExtra + extraHeader
		if z.last != nil {
			// Creating this member first ends the last with its data
			// descriptor: 16 bytes, 24 with zip64 sizes.
			at += 16
			if z.last.n >= 0xffffffff {
				at += 8
			}
		}
		pad := (arrayAlign - at%arrayAlign) % arrayAlign
		fh.Extra = append([]byte{0x35, 0xd9, byte(pad), 0}, make([]byte, pad)...)
	}
	w, err := z.zw.CreateHeader(fh)
	if err != nil {
		return nil, err
	}
	z.last = &countWriter{w: w}
	return z.last, nil
}

// Close writes the archive's directory. It does not close the underlying
// writer.
func (z *NPZWriter) Close() error { return z.zw.Close() }

// WriteNPZFile writes arrays as the .npz archive name, atomically.
func WriteNPZFile(name string, arrays []NamedArray, compress bool) error {
	return atomicfile.Write(name, 0o666, func(f *os.File) error { return WriteNPZ(f, arrays, compress) })
}
