package npybridge

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/ndarray"
)

// NamedArray is one array of an .npz archive.
type NamedArray struct {
	Name  string         // the member name without ".npy", e.g. "arr_0"
	Array *ndarray.Array // the member's array
}

// NPZ is an .npz archive opened for reading one member at a time, as
// numpy's np.load reads archives: opening reads the zip directory only, and
// each member is decoded when it is asked for. A member that is not an
// array ndpack holds (a text file, an object array) fails only
// when it is read, not the archive. Opening checks the directory's layout
// first: members whose bytes overlap each other or the directory, or lie
// beyond the archive, fail it with ErrOverlap. Members can be read
// concurrently.
type NPZ struct {
	opts      ReadOptions
	r         io.ReaderAt
	names     []string   // of the members, in archive order
	entry     []int32    // the entry of each name
	byName    []int32    // indexes into names, sorted by name, for lookups
	entries   []zipEntry // the directory
	size      int64      // of the archive
	file      *os.File   // of OpenNPZFile, for OpenMapped
	inflaters sync.Pool  // of *inflate.Reader, reused from member to member
}

// OpenNPZ opens the .npz archive of size bytes that r holds. It reads the
// zip directory and nothing else; r must stay readable while the NPZ is in
// use. Its memory is that of the directory's names.
//
// r is read in few, large pieces, so that a remote object (remote.Object,
// one request per ReadAt) costs few requests: the archive's last 64 KiB,
// which hold the directory of up to about 700 members; then, for a member,
// one read of at most 4 KiB for its local header and NPY header; then its
// data. When r also has a method Stream(off, n int64) io.ReadCloser, as
// remote.Object does, a larger directory and each member's data are read
// through it, each in one request.
// It fails with an *ndarray.Error wrapping ErrNotNPZ (not a zip archive, a member
// name twice, a negative size), ErrOverlap (members overlapping or beyond
// the archive) or ndarray.ErrTruncated (the directory cut short), or with r's read
// error.
func (o ReadOptions) OpenNPZ(r io.ReaderAt, size int64) (*NPZ, error) {
	if size < 0 {
		return nil, errAt(ErrNotNPZ, -1, "negative archive size %d", size)
	}
	d, err := readZipDir(r, size)
	if err != nil {
		return nil, err
	}
	z := &NPZ{opts: o, r: r, entries: d.entries, size: size}
	for i := range z.entries {
		e := &z.entries[i]
		if strings.HasSuffix(e.name, "/") {
			continue // a folder entry
		}
		// np.load names members without ".npy"; other files keep their
		// whole name.
		z.names = append(z.names, strings.TrimSuffix(e.name, ".npy"))
		z.entry = append(z.entry, int32(i))
	}
	// A sorted index rather than a map: an archive of 100,000 members
	// costs 4 bytes a member for it, not about 80.
	z.byName = make([]int32, len(z.names))
	for i := range z.byName {
		z.byName[i] = int32(i)
	}
	slices.SortStableFunc(z.byName, func(a, b int32) int { return strings.Compare(z.names[a], z.names[b]) })
	for k := 1; k < len(z.byName); k++ {
		if z.names[z.byName[k]] == z.names[z.byName[k-1]] {
			e := &z.entries[z.entry[z.byName[k]]]
			return nil, errAt(ErrNotNPZ, e.record, "member %q appears twice", e.name)
		}
	}
	return z, nil
}

// OpenNPZFile opens the .npz archive name. Close it when done.
// It fails with os.Open's error, or with an *os.PathError around OpenNPZ's.
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
// Its error is the file's close error.
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
	e, err := z.member(name)
	if err != nil {
		return nil, err
	}
	h, m, err := z.openMember(name, e, false)
	if err != nil {
		return nil, err
	}
	m.Close()
	notMappable := func(format string, args ...any) (*Mapped, error) {
		return nil, memberError(name, errAt(ErrNotMappable, -1, format, args...))
	}
	switch {
	case z.file == nil:
		return notMappable("the archive was not opened from a file (OpenNPZFile)")
	case e.method != zipStore:
		return notMappable("the member is compressed; only stored members can be mapped")
	case h.FortranOrder && len(h.Shape) > 1:
		return notMappable("the member is in Fortran order, which cannot be viewed row-major in place")
	case !canMap:
		return notMappable("mmap is not available on this platform")
	}
	off := m.dataAt + h.DataOffset
	if align := int64(itemAlignment(h.DType)); off%align != 0 {
		return notMappable("its data starts at file offset %d, not a multiple of %d as %s items need", off, align, h.DType)
	}
	if h.DataLen() == 0 {
		a, err := ndarray.New(h.DType, h.Shape, nil)
		return &Mapped{Array: a, Header: h}, err
	}
	mp, data, err := mapSection(z.file, off, int(h.DataLen()))
	if err != nil {
		return nil, memberError(name, err)
	}
	a, err := ndarray.New(h.DType, h.Shape, data)
	if err != nil {
		unmap(mp)
		return nil, memberError(name, err)
	}
	// Guard's errors name the archive and count from the mapping's first
	// byte, which mapSection puts at the page holding off.
	base := off &^ int64(os.Getpagesize()-1)
	return &Mapped{Array: a, Header: h, mapping: mp, name: z.file.Name(), off: base}, nil
}

// itemAlignment is the alignment Go wants for the elements of dt, as typed
// access (ndarray.Values) uses them without a copy.
func itemAlignment(dt ndarray.DType) int {
	switch dt.Kind {
	case 'S', 'V':
		return 1
	case 'U':
		return 4
	case 'c':
		return min(dt.ItemSize/2, 8)
	}
	return min(max(dt.ItemSize, 1), 8)
}

// Names returns the members' names in archive order, as np.load lists them:
// "image" for the member image.npy, other files under their whole name.
func (z *NPZ) Names() []string { return append([]string{}, z.names...) }

// member returns the directory entry of the .npy file called name.
func (z *NPZ) member(name string) (*zipEntry, error) {
	k, ok := slices.BinarySearchFunc(z.byName, name, func(i int32, name string) int { return strings.Compare(z.names[i], name) })
	if !ok {
		return nil, errAt(ErrNoMember, -1, "no member %q (the archive holds %s)", name, listNames(z.names))
	}
	e := &z.entries[z.entry[z.byName[k]]]
	if !strings.HasSuffix(e.name, ".npy") {
		return nil, errAt(ndarray.ErrNotArray, -1, "member %q is not a NAME.npy file", e.name)
	}
	return e, nil
}

// listNames lists names for an error message, the first few of many.
func listNames(names []string) string {
	const most = 20
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

// openMember opens the member e and reads its NPY header, leaving the
// reader at the first data byte; whole says the member will be read to its
// end (see openZipMember). The header must declare exactly the bytes
// the member holds: more is truncation, refused before any data is read
// (whatever the header claims, nothing is allocated for it), and less
// leaves bytes that np.load would not read.
func (z *NPZ) openMember(name string, e *zipEntry, whole bool) (*Header, *zipMember, error) {
	m, err := openZipMember(z.r, e, &z.inflaters, whole)
	if err != nil {
		return nil, nil, memberError(name, err)
	}
	h, err := z.opts.ReadHeader(m)
	if err != nil {
		m.Close()
		return nil, nil, memberError(name, err)
	}
	declared := uint64(h.DataOffset + h.DataLen())
	switch most := e.maxBytes(); {
	case e.usize > declared:
		err = errAt(errHeader, -1, "the member decompresses to %d bytes, its NPY header declares %d", e.usize, declared)
	case declared > e.usize:
		err = errAt(ndarray.ErrTruncated, h.DataOffset, "the header announces %d data bytes (shape %s of %s), the member holds %d (its directory record at archive byte %d)",
			h.DataLen(), ndarray.FormatShape(h.Shape), h.DType, max(0, int64(e.usize)-h.DataOffset), e.record)
	case declared > most:
		err = errAt(ndarray.ErrTruncated, h.DataOffset, "the header announces %d data bytes (shape %s of %s); %d deflated bytes decompress to at most %d",
			h.DataLen(), ndarray.FormatShape(h.Shape), h.DType, e.csize, most)
	}
	if err != nil {
		m.Close()
		return nil, nil, memberError(name, err)
	}
	return h, m, nil
}

// Header reads the NPY header of the member called name, decompressing only
// as far as the header. It fails if the member cannot hold the data the
// header declares.
// It fails with an error wrapping ErrNoMember for a name the archive lacks,
// ErrNotNPZ for a member np.load could not read (encrypted, another
// compression, a bad local header), ErrOverlap when the member's bytes run
// into the next one's, ReadHeader's errors, ndarray.ErrTruncated when the member is
// too short for its data, or ndarray.ErrMalformed when it holds more.
func (z *NPZ) Header(name string) (*Header, error) {
	e, err := z.member(name)
	if err != nil {
		return nil, err
	}
	h, m, err := z.openMember(name, e, false)
	if err != nil {
		return nil, err
	}
	m.Close()
	return h, nil
}

// Open returns the NPY header of the member called name and a reader of its
// data bytes as stored (column-major when Header.FortranOrder), which
// decompresses as it is read: a member of any size is read in bounded
// memory. The reader fails with ndarray.ErrTruncated if the member ends early;
// close it when done. When the archive is a local file or in memory (an
// *os.File, *bytes.Reader or *strings.Reader), whose size is a fact, the
// reader has a Len method giving the data bytes left to read, which the
// member was checked to be able to hold (Header.ReadArray then reads them
// into one allocation); of any other io.ReaderAt, whose size was a claim
// (a remote object's), it has none, and ReadArray's memory grows as the
// bytes arrive.
func (z *NPZ) Open(name string) (*Header, io.ReadCloser, error) {
	e, err := z.member(name)
	if err != nil {
		return nil, nil, err
	}
	h, m, err := z.openMember(name, e, true)
	if err != nil {
		return nil, nil, err
	}
	d := &memberData{m: m, left: h.DataLen(), h: h, name: name}
	if sizeKnown(z.r) {
		return h, sizedMemberData{d}, nil
	}
	return h, d, nil
}

// readClaimed reads n bytes of a member's data from d: into one allocation
// when the archive's size is known, else into memory that grows as they
// arrive.
func (z *NPZ) readClaimed(d io.Reader, n int64) ([]byte, error) {
	if sizeKnown(z.r) {
		data := make([]byte, n)
		_, err := io.ReadFull(d, data)
		return data, err
	}
	return boundedio.ReadFull(d, int(n))
}

// memberData reads exactly a member's data bytes.
type memberData struct {
	m    *zipMember
	left int64
	h    *Header
	name string
}

func (d *memberData) Read(p []byte) (int, error) {
	if d.left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), d.left)]
	n, err := d.m.Read(p)
	d.left -= int64(n)
	switch {
	case err == io.EOF && d.left > 0:
		err = errAt(ndarray.ErrTruncated, d.h.DataOffset, "the header announces %d data bytes, the member ends %d short", d.h.DataLen(), d.left)
	case err == io.EOF:
		err = nil
	}
	if err != nil {
		err = memberError(d.name, err)
	}
	return n, err
}

// sizedMemberData is the data of a member of an archive whose size is
// known: its Len lets ReadArray read it into one allocation.
type sizedMemberData struct{ *memberData }

// Len returns the data bytes left to read.
func (d sizedMemberData) Len() int { return int(d.left) }

func (d *memberData) Close() error { return d.m.Close() }

// Read decodes the member called name, and no other. Its decompressed size
// must be exactly what its NPY header declares: more is refused (a zip bomb
// or hidden data), less is truncation. The array is read into one
// allocation of its size (a Fortran-order one transposed as it arrives),
// which the member's compressed bytes were checked to be able to fill.
// It fails as Header does, and with an error wrapping ndarray.ErrTruncated when the
// data ends early.
func (z *NPZ) Read(name string) (*ndarray.Array, error) {
	h, rc, err := z.Open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return h.ReadArray(rc)
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
// It fails as OpenNPZ and NPZ.Read do.
func (o ReadOptions) ReadNPZ(r io.ReaderAt, size int64) ([]NamedArray, error) {
	z, err := o.OpenNPZ(r, size)
	if err != nil {
		return nil, err
	}
	return z.readAll()
}

// readAll reads every member, on as many cores as there are members: each
// array is read into its own allocation either way, so reading them at once
// costs no more memory. The first error in archive order is returned.
func (z *NPZ) readAll() ([]NamedArray, error) {
	out := make([]NamedArray, len(z.names))
	errs := make([]error, len(z.names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(z.names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i].Name = z.names[i]
				out[i].Array, errs[i] = z.Read(z.names[i])
			}
		}()
	}
	for i := range z.names {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadNPZFile reads the .npz archive name.
// It fails with os.Open's error, or with an *os.PathError around ReadNPZ's.
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

// npzTime is the modification time of written members: fixed, so that the
// same arrays always make the same archive.
var npzTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteNPZ writes arrays as an .npz archive that np.load reads: members
// NAME.npy, stored like np.savez or, with compress, deflated like
// np.savez_compressed.
// It fails as NPZWriter.WriteArray and Close do, with an error wrapping
// ErrInvalidArray or w's write error.
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
// Make one with NewNPZWriter: the zero NPZWriter writes to nothing, and its
// methods fail.
type NPZWriter struct {
	// Level is the deflate level of compressed members, 1 (fastest) to 9
	// (smallest); 0 means 6, zlib's default, which np.savez_compressed
	// uses. Set it before writing; a member takes the level it is created
	// with. A large member is compressed on every core in 1 MiB blocks
	// joined into one deflate stream, in memory bounded by the cores times
	// the block, never the member; small members (a block or less) are
	// compressed on every core too, several at once, and written in order.
	// The archive is the same bytes whatever the number of cores, and each
	// member within 0.1% of the size np.savez_compressed (zlib) gives it at
	// the same level.
	Level int

	zw     *zip.Writer
	count  *countWriter
	last   *countWriter // the member being written, nil before the first or after a small compressed one
	method uint16
	seen   map[string]bool
	small  smallMembers   // compressed arrays of a block or less, in flight
	inline inlineDeflater // for other members of one block (object arrays)
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
	z := &NPZWriter{zw: zip.NewWriter(c), count: c, method: method, seen: map[string]bool{}}
	z.zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return newParallelDeflater(w, z.level(), &z.inline), nil
	})
	return z
}

// level is the deflate level of the next member.
func (z *NPZWriter) level() int {
	if z.Level == 0 {
		return 6
	}
	return z.Level
}

// WriteArray adds a as the member NAME.npy.
// It fails with an error wrapping ErrInvalidArray when a is nil or invalid,
// has a subarray dtype, or name is empty or already written, and with w's
// write error.
func (z *NPZWriter) WriteArray(name string, a *ndarray.Array) error {
	if a == nil {
		return errAt(ErrInvalidArray, -1, "npz member %q is a nil *ndarray.Array", name)
	}
	if err := a.Validate(); err != nil {
		return memberError(name, wrapAt(ErrInvalidArray, -1, err))
	}
	if err := checkWritable(a.DType); err != nil {
		return memberError(name, err)
	}
	if z.isSmall(a.DType, a.Shape) {
		return z.addSmall(name, a.DType, a.Shape, bytes.NewReader(a.Data))
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
// It fails with an error wrapping ErrInvalidArray for a bad dtype or shape
// or an empty or repeated name, ndarray.ErrTruncated when r ends early, and with r's
// or w's error.
func (z *NPZWriter) WriteFrom(name string, dt ndarray.DType, shape []int, r io.Reader) error {
	if _, err := ndarray.ByteSize(dt, shape); err != nil {
		return memberError(name, wrapAt(ErrInvalidArray, -1, err))
	}
	if err := checkWritable(dt); err != nil {
		return memberError(name, err)
	}
	if z.isSmall(dt, shape) {
		return z.addSmall(name, dt, shape, r)
	}
	mw, err := z.create(name)
	if err != nil {
		return err
	}
	return memberError(name, WriteFrom(mw, dt, shape, r))
}

func (z *NPZWriter) create(name string) (io.Writer, error) {
	if err := z.claim(name); err != nil {
		return nil, err
	}
	// The small members before this one go first.
	if err := z.small.drain(z); err != nil {
		return nil, err
	}
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

// claim checks a new member's name and the level, and takes the name.
func (z *NPZWriter) claim(name string) error {
	if z.zw == nil {
		return errNoArchive
	}
	if name == "" || z.seen[name] {
		return errAt(ErrInvalidArray, -1, "npz member name %q is empty or repeated", name)
	}
	if z.Level < 0 || z.Level > 9 {
		return errAt(ErrInvalidArray, -1, "npz deflate level %d is not 1 to 9 (or 0, the default 6)", z.Level)
	}
	z.seen[name] = true
	return nil
}

// Close writes the members still being compressed and the archive's
// directory. It does not close the underlying writer.
// Its error is w's write error.
func (z *NPZWriter) Close() error {
	if z.zw == nil {
		return errNoArchive
	}
	if err := z.small.drain(z); err != nil {
		return err
	}
	return z.zw.Close()
}

// WriteNPZFile writes arrays as the .npz archive name, atomically.
// It fails as WriteNPZ does, or with the file system's error; name is then
// left as it was.
func WriteNPZFile(name string, arrays []NamedArray, compress bool) error {
	return atomicfile.Write(name, 0o666, func(f *os.File) error { return WriteNPZ(f, arrays, compress) })
}
