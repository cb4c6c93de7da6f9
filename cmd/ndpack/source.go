package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/filekind"
	"github.com/ndpack/ndpack/internal/filesection"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/remote"
)

// arraySource is one array of a file as its header describes it, with its
// data bytes to be read once, in file order: commands that look at every
// element (inspect) stream them in bounded memory instead of loading the
// array.
type arraySource struct {
	name    string // the npz member or msgpack map key; "" for a lone array
	dtype   ndarray.DType
	shape   []int
	fortran bool  // the data is column-major
	size    int64 // data bytes
	// dataOffset is where the data starts in the file, or in the npz
	// member, for errors.
	dataOffset int64
	// open returns a reader of exactly the data bytes. When the input
	// was checked to hold them (a file, an npz member), the reader has a
	// Len method, and the array can be read whole into one allocation;
	// otherwise (standard input) memory must grow only as bytes arrive.
	open func() (io.ReadCloser, error)
	err  error // why this array cannot be read (an npz member), or nil
	// objects reads an object array (err then says it is one), when the
	// command was asked to read them (--objects); nil otherwise.
	objects func() (*npybridge.ObjectArray, error)
	// value is the msgpack value of a map entry that is not an array
	// (err then says so), for inspect to print.
	value []byte
	// rows reads the rows start:stop alone (Python slice rules), for
	// --rows; nil where they cannot be read alone (msgpack, standard
	// input).
	rows func(start, stop int) (*ndarray.Array, error)
	// whole says open reads the data into memory whole (the rows of
	// --rows) rather than streaming it.
	whole bool
	// maxSize bounds the bytes of the array read into memory whole
	// (--max-size), set by fileArrays' at and all.
	maxSize int64
}

// fits refuses an array whose data, read into memory whole, would be
// larger than --max-size allows, before anything is allocated for it.
func (a arraySource) fits() error {
	if a.maxSize <= 0 || a.size <= a.maxSize {
		return nil
	}
	what := "the array"
	if a.name != "" {
		what = fmt.Sprintf("array %q", a.name)
	}
	return fmt.Errorf("%s, %s of %s, is %s: more than the %s --max-size lets a command read into memory (by default half the memory the process may use); raise it, or read rows with --rows",
		what, ndarray.FormatShape(a.shape), a.dtype, bytesText(a.size), bytesText(a.maxSize))
}

// fileArrays is the arrays of one input file.
type fileArrays struct {
	format  format
	version string // the NPY format version, for .npy
	dialect string // for msgpack: "ext 110", "msgpack-numpy", "openpi"
	// arrays are the arrays, described when the file was opened; an
	// npz's are described one by one, by member, when asked for (len and
	// at), so that an archive of many members is not held all at once.
	arrays []arraySource
	n      int
	member func(i int) arraySource
	size   int64 // bytes of the input, for progress; 0 if unknown
	close  func()
	// objects says to read object arrays (--objects): their sources get
	// an objects reader instead of failing.
	objects bool
	// maxObjects bounds what reading an object array may cost
	// (--max-objects-size); 0 is npybridge's default.
	maxObjects int64
	// maxHeader bounds an .npy header's text (--max-header-size); 0 is
	// numpy's default, 10,000 bytes.
	maxHeader int
	// maxSize bounds an array read into memory whole (--max-size).
	maxSize int64
	// memberNames are an .npz's member names, from its directory: a
	// member is found by name without describing the others.
	memberNames []string
	// wholeMember describes member i as member does, when the member is
	// to be read whole, in one request with its headers (a remote .npz);
	// nil where that is not so.
	wholeMember func(i int) arraySource
	// values takes a msgpack message that holds no array as its values,
	// listed as members that are not arrays (inspect), not as a failure.
	values bool
}

// inputOptions are how a command's inputs are read: object arrays
// (--objects, --max-objects-size), header sizes (--max-header-size) and
// the largest array read into memory (--max-size; 0: half the memory the
// process may use).
type inputOptions struct {
	objects    bool
	maxObjects int64
	maxHeader  int
	maxSize    int64
	values     bool        // a msgpack message without arrays is its values (inspect)
	stderr     io.Writer   // where a remote input's warnings go
	remote     remoteFlags // how a remote input is read
}

// arrayBound is the largest array read into memory whole: --max-size, else
// half the memory the process may use (the other half for what is made of
// it).
func (o inputOptions) arrayBound() int64 {
	if o.maxSize > 0 {
		return o.maxSize
	}
	return usableMemory() / 2
}

// readOptions are the options .npy headers and data are read with.
func (fa *fileArrays) readOptions() npybridge.ReadOptions {
	return npybridge.ReadOptions{MaxHeaderSize: fa.maxHeader}
}

// objectOptions are the options object arrays are read with.
func (fa *fileArrays) objectOptions() npybridge.ReadOptions {
	return npybridge.ReadOptions{AllowObjects: true, MaxObjectsSize: fa.maxObjects, MaxHeaderSize: fa.maxHeader}
}

// len returns the number of arrays.
func (fa *fileArrays) len() int {
	if fa.member != nil {
		return fa.n
	}
	return len(fa.arrays)
}

// at describes the array i.
func (fa *fileArrays) at(i int) arraySource {
	a := fa.arrays
	if fa.member != nil {
		a = []arraySource{fa.member(i)}
		i = 0
	}
	a[i].maxSize = fa.maxSize
	return a[i]
}

// all describes every array.
func (fa *fileArrays) all() []arraySource {
	if fa.member != nil && fa.arrays == nil {
		fa.arrays = make([]arraySource, 0, fa.n)
		for i := range fa.n {
			fa.arrays = append(fa.arrays, fa.member(i))
		}
	}
	for i := range fa.arrays {
		fa.arrays[i].maxSize = fa.maxSize
	}
	return fa.arrays
}

// named describes the array called name alone, when fa can find it
// without describing the others: a member of an .npz, by its directory (of
// a remote archive, in one request with its data when it is to be read
// whole). found is false when it is not there; known is false when fa
// cannot tell without describing every array.
func (fa *fileArrays) named(name string) (a arraySource, found, known bool) {
	if fa.memberNames == nil {
		return arraySource{}, false, false
	}
	i := slices.Index(fa.memberNames, name)
	if i < 0 {
		return arraySource{}, false, true
	}
	if fa.wholeMember != nil {
		a = fa.wholeMember(i)
	} else {
		a = fa.member(i)
	}
	a.maxSize = fa.maxSize
	return a, true, true
}

// openArrays opens the input name ("-" for standard input) and describes its
// arrays without reading their data. f is the format if known, else "".
func openArrays(name string, stdin io.Reader, f format) (*fileArrays, error) {
	return openArraysWith(name, stdin, f, false, 0)
}

// openArraysWith is openArrays that, with objects, also describes object
// arrays (pickles), to be read with their sources' objects readers
// within maxObjects bytes (0: the default).
func openArraysWith(name string, stdin io.Reader, f format, objects bool, maxObjects int64) (*fileArrays, error) {
	return openInputArrays(name, stdin, f, inputOptions{objects: objects, maxObjects: maxObjects})
}

// openInputArrays is openArrays with the options o.
func openInputArrays(name string, stdin io.Reader, f format, o inputOptions) (*fileArrays, error) {
	objects, maxObjects := o.objects, o.maxObjects
	if name == "-" {
		return stdinArrays(stdin, f, o)
	}
	if fa, ok, err := openStoreInput(name, f, o); ok {
		return fa, err // a Zarr store or a reference file (zarrin.go)
	}
	if remote.IsURL(name) {
		fa, _, err := openRemote(name, f, o)
		return fa, err
	}
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, err
	}
	if fi.IsDir() {
		file.Close()
		return nil, fmt.Errorf("%s is a directory", name)
	}
	if !fi.Mode().IsRegular() {
		// A pipe, a FIFO, <(...), a terminal: read once, front to back.
		fa, err := stdinArrays(file, f, o)
		if err != nil {
			file.Close()
			return nil, err
		}
		done := fa.close
		fa.close = func() { done(); file.Close() }
		return fa, nil
	}
	if f == "" {
		if f, err = sniffReader(file); err != nil {
			file.Close()
			return nil, err
		}
	}
	fa := &fileArrays{format: f, size: fi.Size(), close: func() { file.Close() }, objects: objects, maxObjects: maxObjects, maxHeader: o.maxHeader, maxSize: o.arrayBound(), values: o.values}
	switch f {
	case formatNPY:
		err = fa.npyFile(file)
	case formatNPZ:
		err = fa.npzFile(file, fi.Size())
	case formatMsgpack:
		err = fa.msgpackFile(file, fi.Size())
	}
	if err != nil {
		err = hintFormat(err, name, file, f)
		fa.close()
		return nil, err
	}
	return fa, nil
}

// checkNPY notes an .npy's version and refuses one whose input (a "file",
// an "object") is shorter than its header announces, before anything is
// read or allocated for the data.
func (fa *fileArrays) checkNPY(h *npybridge.Header, what string) error {
	fa.version = fmt.Sprintf("%d.%d", h.Major, h.Minor)
	if want := h.DataOffset + h.DataLen(); fa.size < want {
		return &ndarray.Error{Pkg: "npybridge", Err: ndarray.ErrTruncated, Offset: h.DataOffset,
			Detail: fmt.Sprintf("the header announces %d data bytes (shape %s of %s), the %s has %d",
				h.DataLen(), ndarray.FormatShape(h.Shape), h.DType, what, max(0, fa.size-h.DataOffset))}
	}
	return nil
}

func (fa *fileArrays) npyFile(file *os.File) error {
	h, err := fa.readOptions().ReadHeader(bufio.NewReader(file))
	if fa.objects && errors.Is(err, npybridge.ErrObjectArray) {
		fa.arrays = []arraySource{{err: err, objects: func() (*npybridge.ObjectArray, error) {
			return fa.objectOptions().ReadObjects(sizedSection{io.NewSectionReader(file, 0, fa.size)})
		}}}
		return nil
	}
	if err != nil {
		return err
	}
	if err := fa.checkNPY(h, "file"); err != nil {
		return err
	}
	src := headerSource("", h, func() (io.ReadCloser, error) {
		return sizedSection{io.NewSectionReader(file, h.DataOffset, h.DataLen())}, nil
	})
	size := fa.size
	src.rows = func(start, stop int) (*ndarray.Array, error) {
		return fa.readOptions().ReadRowsAt(file, size, start, stop)
	}
	fa.arrays = []arraySource{src}
	return nil
}

// sizedSection is a section of a file that was checked to hold it: its Len
// lets npybridge's ReadArray read it whole into one allocation.
type sizedSection struct{ *io.SectionReader }

// Len returns the bytes left in the section.
func (s sizedSection) Len() int {
	pos, _ := s.Seek(0, io.SeekCurrent)
	return int(s.Size() - pos)
}

func (s sizedSection) Close() error { return nil }

func headerSource(name string, h *npybridge.Header, open func() (io.ReadCloser, error)) arraySource {
	return arraySource{name: name, dtype: h.DType, shape: h.Shape, fortran: h.FortranOrder && len(h.Shape) > 1, size: h.DataLen(), dataOffset: h.DataOffset, open: open}
}

func (fa *fileArrays) npzFile(r io.ReaderAt, size int64) error {
	opts := fa.objectOptions()
	opts.AllowObjects = fa.objects
	z, err := opts.OpenNPZ(r, size)
	if err != nil {
		return err
	}
	names := z.Names()
	fa.n, fa.memberNames = len(names), names
	var member func(i int) arraySource
	if _, streams := r.(interface {
		Stream(off, n int64) io.ReadCloser
	}); streams {
		fa.wholeMember = func(i int) arraySource {
			return fa.npzWholeMember(z, names[i], func() arraySource { return member(i) })
		}
	}
	member = func(i int) arraySource {
		member := names[i]
		h, err := z.Header(member)
		if fa.objects && errors.Is(err, npybridge.ErrObjectArray) {
			return arraySource{name: member, err: err, objects: func() (*npybridge.ObjectArray, error) { return z.ReadObjects(member) }}
		}
		if err != nil {
			return arraySource{name: member, err: err}
		}
		src := headerSource(member, h, func() (io.ReadCloser, error) {
			_, rc, err := z.Open(member)
			return rc, err
		})
		src.rows = func(start, stop int) (*ndarray.Array, error) { return z.ReadRows(member, start, stop) }
		return src
	}
	fa.member = member
	return nil
}

// npzWholeMember describes the member called name of a remote archive,
// to be read whole: its local header, NPY header and data come in one
// request, which its first open hands on. A member that cannot be opened
// so (an object array, an error) is described by describe instead.
func (fa *fileArrays) npzWholeMember(z *npybridge.NPZ, name string, describe func() arraySource) arraySource {
	h, rc, err := z.Open(name)
	if err != nil {
		return describe()
	}
	held, done := rc, fa.close
	fa.close = func() { held.Close(); done() } // closing it twice is harmless
	src := headerSource(name, h, func() (io.ReadCloser, error) {
		if rc != nil {
			r := rc
			rc = nil
			return r, nil
		}
		_, r, err := z.Open(name)
		return r, err
	})
	src.rows = func(start, stop int) (*ndarray.Array, error) { return z.ReadRows(name, start, stop) }
	return src
}

// msgpackFile reads the framing of a msgpack file through a mapping, which
// touches only the pages that hold it, and the data through ReadAt.
func (fa *fileArrays) msgpackFile(file *os.File, size int64) error {
	m, release, err := filesection.Map(file, size)
	if err != nil {
		return err
	}
	// The entries of a map are described when asked for, from the mapping,
	// which therefore lives as long as fa.
	closeFile := fa.close
	fa.close = func() { release(); closeFile() }
	// Another process may cut the file short while its framing is read: a
	// fault then is an error naming the file, not a crash.
	guard := func(fn func() error) error { return filesection.Guard(file.Name(), m, 0, fn) }
	return guard(func() error {
		return fa.msgpackArrays(m, func(off, n int64) io.ReadCloser {
			return sizedSection{io.NewSectionReader(file, off, n)}
		}, guard)
	})
}

// stdinArrays reads standard input: an .npy streams; the other formats need
// random access and are held in memory.
func stdinArrays(stdin io.Reader, f format, o inputOptions) (*fileArrays, error) {
	br := bufio.NewReaderSize(stdin, 1<<16)
	head, _ := br.Peek(ndpack.DetectLen)
	if f == "" {
		f = ndpack.DetectFormat(head)
	}
	// What came with the first read, kept to say what the input looks
	// like should it fail; waiting for more could hold a live stream.
	head, _ = br.Peek(min(br.Buffered(), filekind.HeadLen))
	head = bytes.Clone(head)
	fa, err := stdinFormat(br, f, o)
	if err != nil {
		return nil, kindHint(err, "standard input", head, f)
	}
	return fa, nil
}

// stdinFormat reads standard input, buffered in br, in the format f.
func stdinFormat(br *bufio.Reader, f format, o inputOptions) (*fileArrays, error) {
	fa := &fileArrays{format: f, close: func() {}, objects: o.objects, maxObjects: o.maxObjects, maxHeader: o.maxHeader, maxSize: o.arrayBound(), values: o.values}
	if f == formatNPY {
		var header bytes.Buffer // kept to read an object array from its start
		h, err := fa.readOptions().ReadHeader(io.TeeReader(br, &header))
		if o.objects && errors.Is(err, npybridge.ErrObjectArray) {
			fa.arrays = []arraySource{{err: err, objects: func() (*npybridge.ObjectArray, error) {
				return fa.objectOptions().ReadObjects(io.MultiReader(&header, br))
			}}}
			return fa, nil
		}
		if err != nil {
			return nil, err
		}
		fa.version = fmt.Sprintf("%d.%d", h.Major, h.Minor)
		fa.arrays = []arraySource{headerSource("", h, func() (io.ReadCloser, error) {
			return io.NopCloser(&exactReader{r: br, left: h.DataLen(), total: h.DataLen(), at: h.DataOffset}), nil
		})}
		return fa, nil
	}
	if f == formatNPZ {
		return spoolNPZ(fa, br)
	}
	b, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	fa.size = int64(len(b))
	return fa, fa.msgpackArrays(b, func(off, n int64) io.ReadCloser {
		return nopCloser{bytes.NewReader(b[off : off+n])}
	}, func(fn func() error) error { return fn() })
}

// nopCloser is io.NopCloser that keeps the Len of a bytes.Reader.
type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// exactReader reads exactly left bytes of r, failing if r ends first.
type exactReader struct {
	r           io.Reader
	left, total int64
	at          int64 // the input offset of the first byte
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.left)]
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, &ndarray.Error{Pkg: "npybridge", Err: ndarray.ErrTruncated, Offset: e.at + e.total - e.left,
			Detail: fmt.Sprintf("the header announces %d data bytes, standard input ends after %d of them", e.total, e.total-e.left)}
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// sniffReader tells a file's format from its first bytes.
func sniffReader(f *os.File) (format, error) {
	head := make([]byte, ndpack.DetectLen)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", err
	}
	return ndpack.DetectFormat(head[:n]), nil
}

// hintFormat adds to a failure to read a file in format f what the file
// looks like (formatkinds.go).
func hintFormat(err error, name string, file *os.File, f format) error {
	if file == nil {
		return err
	}
	head := make([]byte, filekind.HeadLen)
	n, rerr := file.ReadAt(head, 0)
	if rerr != nil && rerr != io.EOF {
		return err
	}
	return kindHint(err, name, head[:n], f)
}

// maxSpool bounds an .npz read from a pipe, which is copied to a temporary
// file first: a zip's directory is at its end.
const maxSpool = 64 << 30

// spoolNPZ copies an .npz from a pipe into a temporary file, removed at
// once so that nothing is left behind whatever ends the process, and reads
// it from there.
func spoolNPZ(fa *fileArrays, r io.Reader) (*fileArrays, error) {
	tmp, err := os.CreateTemp("", "ndpack-npz-*")
	if err != nil {
		return nil, fmt.Errorf("an .npz from a pipe is copied to a temporary file first, and none could be made: %w", err)
	}
	os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(r, maxSpool+1))
	if err == nil && n > maxSpool {
		err = fmt.Errorf("an .npz from a pipe is copied to a temporary file first, up to %d GiB; this one is larger: save it to a file and name that", maxSpool>>30)
	}
	if err != nil {
		tmp.Close()
		return nil, err
	}
	fa.size, fa.close = n, func() { tmp.Close() }
	if err := fa.npzFile(tmp, n); err != nil {
		tmp.Close()
		return nil, err
	}
	return fa, nil
}
