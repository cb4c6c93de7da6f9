// Package gr00tmap is the array map of NVIDIA Isaac-GR00T's policy wire
// (the dialect dialect.GR00T names): an .npy file inside a msgpack map,
//
//	{"__ndarray_class__": True, "as_npy": <bytes of np.save(a, allow_pickle=False)>}
//
// as GR00T's MsgSerializer writes it and reads it back with
// np.load(allow_pickle=False). It combines two codecs, msgpack's wire and
// npybridge's NPY files, which is why it is not in package dialect (which
// depends on ndarray alone): the message path (internal/msgarrays, the
// root package's MessageOptions, the command line) reads and writes the
// dialect through it.
package gr00tmap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// The map's keys, as GR00T's MsgSerializer writes them (str, marker first).
const (
	Marker = "__ndarray_class__"
	NPYKey = "as_npy"
)

// prefix is the map up to the bin header of its .npy bytes.
var prefix = mpwire.AppendString(mpwire.AppendBool(mpwire.AppendString(mpwire.AppendMapHeader(nil, 2), Marker), true), NPYKey)

// Size returns the length of a's map as Append writes it. It fails as
// npybridge.Write does for an array np.save cannot write, and with
// ndarray.ErrTooLarge for an .npy file longer than a msgpack bin holds.
func Size(a *ndarray.Array) (int, error) {
	n, err := npybridge.Size(a)
	if err != nil {
		return 0, err
	}
	if uint64(n) > math.MaxUint32 {
		return 0, tooLarge(n)
	}
	return len(prefix) + mpwire.BinHeaderSize(n) + n, nil
}

// Append appends a as GR00T's map to dst: the bytes MsgSerializer writes
// for it, its .npy file the bytes np.save writes. It grows dst at most
// once, and fails as Size does, returning dst unchanged.
func Append(dst []byte, a *ndarray.Array) ([]byte, error) {
	n, err := npybridge.Size(a)
	if err != nil {
		return dst, err
	}
	if uint64(n) > math.MaxUint32 {
		return dst, tooLarge(n)
	}
	dst = slices.Grow(dst, len(prefix)+mpwire.BinHeaderSize(n)+n)
	dst = mpwire.AppendBinHeader(append(dst, prefix...), n)
	return npybridge.Append(dst, a)
}

// EncodeFrom writes GR00T's map of an array of dtype dt and shape whose
// row-major data is read from r, as Append would write it, copying the
// data through without holding it. It writes nothing when npybridge
// refuses the array (npybridge.WriteFrom's errors), and fails with
// ndarray.ErrTruncated when r ends early.
func EncodeFrom(w io.Writer, dt ndarray.DType, shape []int, r io.Reader) error {
	n, err := ndarray.ByteSize(dt, shape)
	if err != nil {
		return wrapAt(ndarray.ErrMalformed, -1, err)
	}
	npyLen := len(npybridge.AppendHeader(nil, dt, shape)) + n
	if uint64(npyLen) > math.MaxUint32 {
		return tooLarge(npyLen)
	}
	pw := &prefixed{w: w, prefix: mpwire.AppendBinHeader(append([]byte{}, prefix...), npyLen)}
	return npybridge.WriteFrom(pw, dt, shape, r)
}

// prefixed writes its prefix before the first bytes written through it:
// npybridge.WriteFrom writes the .npy header only once it has checked the
// array.
type prefixed struct {
	w      io.Writer
	prefix []byte
}

func (p *prefixed) Write(b []byte) (int, error) {
	if p.prefix != nil {
		if _, err := p.w.Write(p.prefix); err != nil {
			return 0, err
		}
		p.prefix = nil
	}
	return p.w.Write(b)
}

// Header is a GR00T array map read without its data.
type Header struct {
	DType ndarray.DType
	Shape []int
	// Fortran says the .npy file holds its data in column-major order
	// (np.save of a Fortran-contiguous array): the data is then not the
	// array's row-major bytes, and Array reorders a copy.
	Fortran    bool
	DataOffset int // of the first data byte, from the map's first byte
	DataLen    int
	Len        int // of the whole map
}

// DecodeHeader reads the GR00T map at the start of b (bytes after it are
// allowed) and the header of the .npy file it holds, with npybridge's
// reader and its bounds: any format version, Fortran order, records and
// strings. It fails with an *ndarray.Error: ndarray.ErrNotArray when b
// does not start with a map that has the marker key, ndarray.ErrTruncated
// when b ends inside it or its .npy file holds less data than its header
// says, ndarray.ErrMalformed when the map has no as_npy bin, has a key
// twice, or holds an .npy file that npybridge refuses or with bytes after
// its data; the npybridge error is
// its cause (npybridge.ErrObjectArray for an object array: a pickle is
// never read). Keys other than the two are stepped over, as GR00T's
// decoder ignores them.
func DecodeHeader(b []byte) (Header, error) {
	n, rest, err := mpwire.ReadMapHeaderBytes(b)
	if errors.Is(err, mpwire.ErrType) {
		return Header{}, errAt(errNotArray, 0, "msgpack type byte 0x%02x is not a map", b[0])
	} else if err != nil {
		return Header{}, wireError(err, 0, "map", "map", "a map")
	}
	var npy []byte
	npyAt, marked := -1, false
	for range n {
		at := len(b) - len(rest)
		key, after, err := mpwire.ReadStringOrBinZC(rest)
		if err != nil && !errors.Is(err, mpwire.ErrType) {
			return Header{}, wireError(err, at, "map key", "map key", "str or bin")
		}
		if err != nil { // a key of another type: stepped over, with its value
			after, err = skip(rest, at)
			if err != nil {
				return Header{}, err
			}
		}
		valAt := len(b) - len(after)
		switch string(key) {
		case Marker:
			if marked {
				return Header{}, errAt(errMalformed, at, "the key %q twice", Marker)
			}
			marked = true
			rest, err = skip(after, valAt)
		case NPYKey:
			if npyAt >= 0 {
				return Header{}, errAt(errMalformed, at, "the key %q twice", NPYKey)
			}
			npy, rest, err = mpwire.ReadBytesZC(after)
			if err != nil {
				return Header{}, wireError(err, valAt, NPYKey, "its bin", "bin (the bytes of an .npy file)")
			}
			npyAt = len(b) - len(rest) - len(npy)
		default:
			rest, err = skip(after, valAt)
		}
		if err != nil {
			return Header{}, err
		}
	}
	switch {
	case !marked:
		return Header{}, errAt(errNotArray, 0, "a map without the key %q", Marker)
	case npyAt < 0:
		return Header{}, errAt(errMalformed, 0, "a map marked %q without the key %q", Marker, NPYKey)
	}
	h, err := npyHeader(npy, npyAt)
	h.Len = len(b) - len(rest)
	return h, err
}

// npyHeader reads the header of the .npy file npy, which lies at byte at
// of the map.
func npyHeader(npy []byte, at int) (Header, error) {
	nh, err := npybridge.ReadOptions{}.ReadHeader(bytes.NewReader(npy))
	if err != nil {
		return Header{}, &ndarray.Error{Pkg: "gr00t", Err: errMalformed, Offset: int64(at), Detail: "as_npy", Cause: err}
	}
	if want, got := nh.DataLen(), int64(len(npy))-nh.DataOffset; got != want {
		class := errMalformed // bytes after the data, which np.load would not read
		if got < want {
			class = ndarray.ErrTruncated
		}
		return Header{}, errAt(class, at, "as_npy holds %s of data where its .npy header (%s %s) says %d",
			codecerr.Count(got, "byte"), nh.DType, ndarray.FormatShape(nh.Shape), want)
	}
	return Header{DType: nh.DType, Shape: nh.Shape, Fortran: nh.FortranOrder && len(nh.Shape) > 1,
		DataOffset: at + int(nh.DataOffset), DataLen: int(nh.DataLen())}, nil
}

// Array returns the array h describes, which DecodeHeader read from b:
// with alias, its Data is b's bytes where they lie aligned for its items
// and in row-major order, and a copy, aligned and row-major, where they
// do not; without, a copy of its own.
func (h Header) Array(b []byte, alias bool) (*ndarray.Array, error) {
	end := h.DataOffset + h.DataLen
	data := b[h.DataOffset:end:end]
	if h.Fortran {
		return ndarray.FromColumnMajor(h.DType, h.Shape, data)
	}
	a := &ndarray.Array{DType: h.DType, Shape: h.Shape, Data: data}
	if !alias || !a.Aligned() {
		a.Data = append([]byte{}, data...)
	}
	return a, nil
}

// skip steps over the value at the start of b, which lies at byte at of
// the map, and returns what follows it.
func skip(b []byte, at int) ([]byte, error) {
	n, err := mpwalk.Len(b, mpwalk.Limits{})
	if err != nil {
		f := skipClasses.Classify(err)
		return nil, errAt(f.Class, at, "%s", f.Detail)
	}
	return b[n:], nil
}

var skipClasses = mpwalk.Classes{
	Invalid:     errMalformed,
	OverBudget:  ndarray.ErrTruncated,
	Ended:       ndarray.ErrTruncated,
	EndedDetail: "input ended inside a value",
	Other:       ndarray.ErrTruncated,
}

// The shared classes as this package words them.
var (
	errNotArray  = codecerr.Class("not a GR00T array map", ndarray.ErrNotArray)
	errMalformed = codecerr.Class("malformed GR00T array map", ndarray.ErrMalformed)
)

func errAt(class error, off int, format string, args ...any) error {
	return &ndarray.Error{Pkg: "gr00t", Err: class, Offset: int64(off), Detail: fmt.Sprintf(format, args...)}
}

func wrapAt(class error, off int, cause error) error {
	return &ndarray.Error{Pkg: "gr00t", Err: class, Offset: int64(off), Cause: cause}
}

func tooLarge(n int) error {
	return errAt(ndarray.ErrTooLarge, -1, "an .npy file of %d bytes, more than the 4294967295 a msgpack bin holds", n)
}

// wireError is a wire reader's failure at byte at of the map.
func wireError(err error, at int, value, length, want string) error {
	off, detail, truncated := mpwire.Describe(err, value, length, want)
	class := errMalformed
	if truncated {
		class = ndarray.ErrTruncated
	}
	return &ndarray.Error{Pkg: "gr00t", Err: class, Offset: int64(at + off), Detail: detail}
}
