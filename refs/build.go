package refs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/remote"
	"github.com/ndpack/ndpack/zarr"
)

// Options says how references are made and read. The zero value is the
// default.
type Options struct {
	// ChunkRows, when positive, cuts each C-order array into chunks of
	// that many rows (along its first axis), references into the same
	// file, so that a reader fetches them in parallel. The rows must be a
	// multiple of it: zarr-python reads only whole chunks, and nothing
	// pads the last one. 0 makes each array (each frame of a stack) one
	// chunk.
	ChunkRows int
	// MaxHeaderSize bounds an .npy header, as npybridge.ReadOptions'
	// does: 0 means numpy's 10,000 bytes.
	MaxHeaderSize int
	// Remote opens http://, https:// and s3:// inputs, and the URLs
	// references point at.
	Remote remote.Options
	// RemoteOnly refuses references to local files when a Set is read
	// (Store): a reference file from elsewhere must not read this
	// machine's files.
	RemoteOnly bool
}

// Builder collects arrays into one reference set: a root group holding an
// array for each .npy or stack added and a group for each .npz. Its zero
// value is not usable; make one with Options.NewBuilder.
type Builder struct {
	o     Options
	set   *Set
	names map[string]string // the names at the root, to the input that took each
}

// NewBuilder returns an empty Builder.
func (o Options) NewBuilder() *Builder {
	b := &Builder{o: o, set: &Set{}, names: map[string]string{}}
	b.set.Put(".zgroup", Ref{Data: zarr.GroupMetadata})
	return b
}

// Set returns the references made so far, the root group's .zgroup
// included.
func (b *Builder) Set() *Set { return b.set }

// Source is one input: the URL references name it by (a URL, or a local
// path), and its bytes.
type Source struct {
	URL  string
	R    io.ReaderAt
	Size int64
}

// NameOf returns the name an input is given: its file's base name without
// its extension (a URL's path's, without its query).
func NameOf(url string) string {
	p := url
	if remote.IsURL(url) {
		p = urlPath(url)
	}
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

// checkName refuses a name that is no Zarr key of one element.
func checkName(name, what string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return errorf(ErrUnsupported, "%s %q cannot name a Zarr array", what, name)
	case strings.ContainsAny(name, "/\\"):
		return errorf(ErrUnsupported, "%s %q holds a / or \\, which a Zarr key would read as a group", what, name)
	case strings.HasPrefix(name, "."):
		return errorf(ErrUnsupported, "%s %q starts with a dot, as only Zarr's metadata keys do", what, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return errorf(ErrUnsupported, "%s %q holds a control character", what, name)
		}
	}
	return nil
}

// claim takes name at the root for the input url.
func (b *Builder) claim(name, url string) error {
	if err := checkName(name, "the name"); err != nil {
		return err
	}
	if other, ok := b.names[name]; ok {
		return errorf(ErrUnsupported, "%s and %s would both be the array or group %q; give one another name", remote.Redact(other), remote.Redact(url), name)
	}
	b.names[name] = url
	return nil
}

// Kind tells an input's format from its first bytes: "npy" (the NPY
// magic), "npz" (a zip archive), or "" for neither.
func Kind(src Source) string {
	var head [6]byte
	n, _ := src.R.ReadAt(head[:], 0)
	switch {
	case n == 6 && string(head[:]) == npybridge.Magic:
		return "npy"
	case n >= 4 && (string(head[:4]) == "PK\x03\x04" || string(head[:4]) == "PK\x05\x06"):
		return "npz"
	}
	return ""
}

// Add adds the input src under name: an .npy as an array, an .npz as a
// group of its stored members, told apart by their first bytes (an NPY
// file named .npz is an NPY file).
// It fails with an error wrapping ErrUnsupported for an input that is
// neither, a name taken or not a Zarr name, and as AddNPY and AddNPZ do.
func (b *Builder) Add(name string, src Source) error {
	return b.add(name, b.scan(src))
}

// AddNPY adds the .npy src as the array name.
// It fails with npybridge's errors for a header it refuses (an object
// array, ErrObjectArray), ndarray.ErrTruncated for a file shorter than
// its header announces, ErrUnsupported for a dtype Zarr v2 cannot carry
// or rows ChunkRows does not divide, and for a name taken.
func (b *Builder) AddNPY(name string, src Source) error {
	return b.add(name, b.scanAs("npy", src))
}

// AddNPZ adds the stored members of the .npz src as the arrays of the
// group name. Members that are not .npy files (a notes.txt) are passed
// over, as they hold no array.
// It fails with npybridge's errors for an archive or member it refuses,
// one wrapping npybridge.ErrCompressed for a deflated member (which no
// reference can point into: convert the archive to a Zarr store
// instead), ErrUnsupported as AddNPY does, and for a name taken.
func (b *Builder) AddNPZ(name string, src Source) error {
	return b.add(name, b.scanAs("npz", src))
}

// AddStack adds the .npy files srcs, of one dtype, shape and order, as
// the array name of one more dimension, first: srcs[i] is its element i,
// one chunk (or ChunkRows' chunks) each.
// It fails with an error wrapping ErrUnsupported naming the first input
// that is not an .npy file or disagrees with the first in dtype, shape or
// order, and as AddNPY does.
func (b *Builder) AddStack(name string, srcs []Source) error {
	scans := make([]scanned, len(srcs))
	for i, src := range srcs {
		scans[i] = b.scanAs("npy", src)
	}
	return b.addStack(name, scans)
}

// header reads and checks the NPY header of the .npy src: the file must
// hold the data it announces.
func (b *Builder) header(src Source) (*npybridge.Header, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(src.R, 0, src.Size), prefixSize)
	h, err := npybridge.ReadOptions{MaxHeaderSize: b.o.MaxHeaderSize}.ReadHeader(r)
	if err != nil {
		return nil, err
	}
	if end := h.DataOffset + h.DataLen(); end > src.Size {
		return nil, &ndarray.Error{Pkg: "refs", Err: ndarray.ErrTruncated, Offset: h.DataOffset,
			Detail: fmt.Sprintf("the header announces %d data bytes (shape %s of %s), the file holds %d", h.DataLen(), ndarray.FormatShape(h.Shape), h.DType, max(0, src.Size-h.DataOffset))}
	}
	return h, nil
}

// scanned is what references to an input need: where its arrays' data
// lie, read from its headers alone.
type scanned struct {
	url     string
	kind    string // "npy" or "npz"
	pieces  []piece
	members []string // an .npz's members, one a piece
	err     error
}

// scan reads the headers of src, whichever kind its first bytes say.
func (b *Builder) scan(src Source) scanned {
	return b.scanAs(Kind(src), src)
}

// scanAs reads the headers of src as an input of kind.
func (b *Builder) scanAs(kind string, src Source) scanned {
	s := scanned{url: src.URL, kind: kind}
	switch kind {
	case "npy":
		h, err := b.header(src)
		s.err = err
		s.pieces = []piece{{src: src, h: h}}
		if h != nil {
			s.pieces[0].off = h.DataOffset
		}
	case "npz":
		s.err = b.scanNPZ(src, &s)
	default:
		s.err = errorf(ErrUnsupported, "%s is neither an .npy file nor an .npz archive", remote.Redact(src.URL))
	}
	return s
}

// scanNPZ reads the directory of the .npz src and its stored members'
// headers.
func (b *Builder) scanNPZ(src Source, s *scanned) error {
	z, err := npybridge.ReadOptions{MaxHeaderSize: b.o.MaxHeaderSize}.OpenNPZ(src.R, src.Size)
	if err != nil {
		return err
	}
	for _, m := range z.Names() {
		h, off, err := z.DataAt(m)
		if errors.Is(err, ndarray.ErrNotArray) {
			continue
		}
		if err != nil {
			return err
		}
		if err := checkName(m, "member"); err != nil {
			return err
		}
		s.members = append(s.members, m)
		s.pieces = append(s.pieces, piece{src: src, h: h, off: off})
	}
	return nil
}

// add puts the references of the scanned input under name.
func (b *Builder) add(name string, s scanned) error {
	if errors.Is(s.err, npybridge.ErrCompressed) {
		return fmt.Errorf("%w (no reference points into deflated data: ndpack convert %s %s.zarr copies the arrays into a Zarr store)",
			s.err, remote.Redact(s.url), name)
	}
	if s.err != nil {
		return s.err
	}
	if err := b.claim(name, s.url); err != nil {
		return err
	}
	if s.kind == "npy" {
		return b.array(name, name, s.pieces)
	}
	b.set.Put(name+"/.zgroup", Ref{Data: zarr.GroupMetadata})
	for i, m := range s.members {
		if err := b.array(name+"/"+m, m, s.pieces[i:i+1]); err != nil {
			return fmt.Errorf("member %q: %w", m, err)
		}
	}
	return nil
}

// addStack puts the references of the scanned .npy files, stacked, under
// name.
func (b *Builder) addStack(name string, scans []scanned) error {
	if len(scans) == 0 {
		return errorf(ErrUnsupported, "a stack of no files")
	}
	pieces := make([]piece, len(scans))
	for i, s := range scans {
		if s.kind != "npy" {
			return errorf(ErrUnsupported, "%s is not an .npy file; a stack is made of .npy files", remote.Redact(s.url))
		}
		if s.err != nil {
			return inputError(s.url, s.err)
		}
		h, first := s.pieces[0].h, pieces[0].h
		if i > 0 && (h.DType != first.DType || ndarray.FormatShape(h.Shape) != ndarray.FormatShape(first.Shape) || h.FortranOrder != first.FortranOrder && len(h.Shape) > 1) {
			return errorf(ErrUnsupported, "%s holds %s, %s; %s holds %s, %s: a stack's files agree in dtype, shape and order",
				remote.Redact(s.url), describe(h), ndarray.FormatShape(h.Shape), remote.Redact(scans[0].url), describe(first), ndarray.FormatShape(first.Shape))
		}
		pieces[i] = s.pieces[0]
	}
	if err := b.claim(name, scans[0].url); err != nil {
		return err
	}
	return b.array(name, name, pieces)
}

func describe(h *npybridge.Header) string {
	if h.FortranOrder && len(h.Shape) > 1 {
		return h.DType.String() + " in Fortran order"
	}
	return h.DType.String()
}

// piece is the data of one file (or member) an array's chunks point into.
type piece struct {
	src Source
	h   *npybridge.Header
	off int64 // of its first data byte in src
}

// array puts the metadata and chunk references of the array at key made
// of pieces: one piece is the array, several are stacked along a new first
// axis. dimName names its dimensions in .zattrs.
func (b *Builder) array(key, dimName string, pieces []piece) error {
	h := pieces[0].h
	fortran := h.FortranOrder && len(h.Shape) > 1
	frame := h.Shape
	chunks := make([]int, len(frame))
	for i, d := range frame {
		chunks[i] = max(d, 1)
	}
	rows := 0 // rows of a frame per chunk; 0: the whole frame
	if b.o.ChunkRows > 0 && len(frame) > 0 && b.o.ChunkRows < frame[0] {
		if fortran {
			return errorf(ErrUnsupported, "a Fortran-order array's rows are not contiguous in its file; --chunk-rows cuts C-order arrays")
		}
		if frame[0]%b.o.ChunkRows != 0 {
			return errorf(ErrUnsupported, "%d rows are not a multiple of %d: zarr-python reads whole chunks only and nothing pads the last; choose a divisor of %d (%s)",
				frame[0], b.o.ChunkRows, frame[0], divisorsNear(frame[0], b.o.ChunkRows))
		}
		rows = b.o.ChunkRows
		chunks[0] = rows
	}
	shape, stacked := frame, len(pieces) > 1
	if stacked {
		shape = append([]int{len(pieces)}, frame...)
		chunks = append([]int{1}, chunks...)
	}
	m := &zarr.Meta{Shape: shape, Chunks: chunks, DType: h.DType, Order: 'C'}
	if fortran {
		m.Order = 'F'
	}
	meta, err := m.Marshal()
	if err != nil {
		return err
	}
	dims := make([]string, len(shape))
	for i := range dims {
		dims[i] = fmt.Sprintf("%s_dim_%d", dimName, i)
	}
	b.set.Put(key+"/.zarray", Ref{Data: meta})
	b.set.Put(key+"/.zattrs", Ref{Data: zarr.MarshalAttrs(map[string]any{"_ARRAY_DIMENSIONS": dims})})
	if h.DataLen() == 0 {
		return nil // no chunks
	}
	rowBytes := h.DataLen()
	if len(frame) > 0 {
		rowBytes /= int64(frame[0])
	}
	for i, p := range pieces {
		n, length := 1, p.h.DataLen()
		if rows > 0 {
			n, length = frame[0]/rows, int64(rows)*rowBytes
		}
		idx := make([]int, len(chunks))
		for k := range n {
			if stacked {
				idx[0] = i
				if len(frame) > 0 {
					idx[1] = k
				}
			} else if len(idx) > 0 {
				idx[0] = k
			}
			b.set.Put(key+"/"+m.ChunkKey(idx), Ref{URL: p.src.URL, Offset: p.off + int64(k)*length, Length: length})
		}
	}
	return nil
}

// divisorsNear names the divisors of n nearest below and above want.
func divisorsNear(n, want int) string {
	below, above := 1, n
	for d := want; d >= 1; d-- {
		if n%d == 0 {
			below = d
			break
		}
	}
	for d := want; d <= n; d++ {
		if n%d == 0 {
			above = d
			break
		}
	}
	if below == above {
		return fmt.Sprint(below)
	}
	return fmt.Sprintf("%d or %d", below, above)
}

// urlPath is the path of a URL, without its query or fragment.
func urlPath(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			return u[j:]
		}
		return "/"
	}
	return u
}
