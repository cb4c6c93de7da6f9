package ndpack

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/gr00tmap"
	"github.com/ndpack/ndpack/internal/mpmsg"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/msgarrays"
	"github.com/ndpack/ndpack/ndarray"
)

// MessageOptions are how a msgpack message holding arrays is read and
// written: the limits it is checked against before the msgpack library
// decodes it, which encodings of arrays are recognised, whether arrays may
// alias the message, and how arrays are written. The zero value decodes
// ext 110 objects and every dialect's maps within the default limits, and
// writes ext 110.
type MessageOptions struct {
	// MaxDepth bounds how deeply arrays and maps nest: a top-level map is
	// at depth 1, an array inside it at depth 2. Zero means 512: real
	// messages nest a handful of levels; the msgpack library recurses once
	// per level, and a few million levels overflow the Go stack, which
	// kills the process.
	MaxDepth int
	// MaxSize bounds one message in bytes; zero means
	// ndarray.DefaultMaxSize (64 MiB). A MessageDecoder refuses a message
	// as soon as a length in it claims more than the limit leaves, before
	// reading or allocating for it.
	MaxSize int64
	// MaxExpansion bounds the memory that decoding may allocate, as
	// estimated for decoding into interface values, as a multiple of the
	// message's size plus 4 MiB. Zero means 48. Ordinary data stays well
	// under it (a list of small integers costs 16 bytes an item, the most
	// of any real data); a message of one-entry maps would cost 117 times
	// its size, and is refused with ndarray.ErrTooLarge.
	MaxExpansion int
	// NoCopy makes the arrays that UnmarshalMessage and MessageDecoder
	// decode alias the message's bytes instead of copying them, which
	// costs nothing whatever their size; the caller must then not change
	// or reuse the bytes while the arrays are in use. An array whose data
	// lies in the message misaligned for its items (see
	// ndarray.Array.Aligned) is copied once, aligned, instead: typed
	// access then never copies it.
	NoCopy bool
	// Unless NoDialects is set, UnmarshalMessage and MessageDecoder also
	// turn the maps of the msgpack-numpy, OpenPI and GR00T dialects (see
	// package dialect) met by interface values anywhere in the message
	// into *ndarray.Array, and their numpy scalars into 0-d arrays. A map
	// is taken for an array when its first key is a dialect's marker
	// ("nd", "__ndarray__", "__npgeneric__", "__ndarray_class__"), or one
	// of its keys is in a map of 3 to 16 entries; such a map that does not
	// hold a valid array is an error, not a map. GR00T's .npy files are
	// read by npybridge's reader with its bounds (any format version,
	// Fortran order, which is copied into row-major order); an object
	// array's pickle is refused, never read. NoDialects leaves those maps as maps: only ext 110
	// objects become arrays.
	NoDialects bool
	// Encoding is how MarshalMessage writes arrays: ext 110 when zero, or
	// maps of the given dialect; for dialect.GR00T, maps holding the bytes
	// np.save(allow_pickle=False) writes, as GR00T's MsgSerializer packs
	// them.
	Encoding dialect.Dialect
	// AllowNonstandard lets MarshalMessage write, as ext 110, arrays of the
	// kinds YEP-110 leaves out (S, U, V, M8, m8, and records): see
	// ext110.Options.AllowNonstandard. The dialects carry what they can
	// whatever it says.
	AllowNonstandard bool
}

func (o MessageOptions) limits() mpwalk.Limits {
	l := mpwalk.Limits{MaxDepth: o.MaxDepth, MaxExpansion: o.MaxExpansion}
	if l.MaxDepth <= 0 {
		l.MaxDepth = mpwalk.DefaultMaxDepth
	}
	if l.MaxExpansion <= 0 {
		l.MaxExpansion = mpwalk.DefaultMaxExpansion
	}
	return l
}

func (o MessageOptions) maxSize() int64 {
	if o.MaxSize > 0 {
		return o.MaxSize
	}
	return ndarray.DefaultMaxSize
}

// UnmarshalMessage decodes one whole msgpack message that fills data into
// v, as msgpack.Unmarshal(data, v) would, with ext 110 objects (and,
// unless NoDialects, the dialects' array maps met by interface values)
// becoming *ndarray.Array, owning their data unless NoCopy.
//
// Before the msgpack library sees the bytes, the message is walked without
// recursion: its size is checked against MaxSize (ndarray.ErrTooLarge),
// every claimed length and count against the bytes that remain
// (ndarray.ErrTruncated), nesting against MaxDepth (ndarray.ErrTooDeep)
// and the memory decoding would take against MaxExpansion
// (ndarray.ErrTooLarge), and bytes after the message are refused
// (ndarray.ErrMalformed). The msgpack library alone sizes slices and maps
// from claimed counts and recurses once per level, so five hostile bytes
// can ask it for gigabytes and a deep message overflows the stack; after
// the walk, what it allocates is bounded by the bytes the message really
// holds.
//
// Those failures are *ndarray.Error of this package ("ndpack: ..."), and
// so is a value that does not fit v (ndarray.ErrMalformed, wrapping the
// msgpack library's error). An array that does not decode fails with its
// codec's error, whose Offset counts from its own first byte: ext110's
// (as ext110.Unmarshal fails), or package dialect's (ndarray.ErrMalformed,
// dialect.ErrPickle or ErrStructured, ndarray.ErrTruncated).
func (o MessageOptions) UnmarshalMessage(data []byte, v any) error { return o.unmarshal(data, v, nil) }

// unmarshal is UnmarshalMessage copying arrays into arena (nil: new
// memory).
func (o MessageOptions) unmarshal(data []byte, v any, arena *mpmsg.Arena) error {
	if max := o.maxSize(); int64(len(data)) > max {
		return &ndarray.Error{Pkg: "ndpack", Err: ndarray.ErrTooLarge, Offset: -1, Option: "MessageOptions.MaxSize",
			Detail: fmt.Sprintf("message of %d bytes exceeds the limit of %d", len(data), max)}
	}
	n, err := mpwalk.Len(data, o.limits())
	if err != nil {
		return walkError(err, 0)
	}
	if n != len(data) {
		return newError(errMalformed, int64(n), codecerr.Count(len(data)-n, "byte")+" after the message", nil)
	}
	return o.decode(data, v, arena)
}

// A ResultBuffer is the memory UnmarshalMessageReusing copies a message's
// arrays into, kept from one call to the next. The zero ResultBuffer is
// empty and ready; it grows, once, to what a call needed, so that the
// next call of the same shape allocates nothing for its arrays.
type ResultBuffer struct {
	arena mpmsg.Arena
}

// UnmarshalMessageReusing is UnmarshalMessage with the arrays' data copied
// into buf's memory where it has room (else into new memory, which buf
// makes room for by the next call): a loop decoding messages of the same
// shape copies each array once and allocates nothing for it. The arrays
// then alias buf, and are valid until the next call with buf, which
// overwrites them: clone what must outlive it. With NoCopy, arrays alias
// data where their bytes lie aligned, and only the others go into buf.
// It fails as UnmarshalMessage does.
func (o MessageOptions) UnmarshalMessageReusing(data []byte, v any, buf *ResultBuffer) error {
	if buf == nil {
		return o.unmarshal(data, v, nil)
	}
	return o.unmarshal(data, v, &buf.arena)
}

// decode decodes a message that the walk checked, copying arrays into
// arena (nil: new memory) unless NoCopy lets them alias data.
func (o MessageOptions) decode(data []byte, v any, arena *mpmsg.Arena) error {
	var maps mpmsg.Maps
	if !o.NoDialects {
		// Where the dialects' maps are, found in one pass: asking at every
		// map whether a later key is a marker would walk each map's
		// values once for every level above them.
		found, _, err := msgarrays.Dialects.Find(data, 0, o.limits().MaxDepth, false)
		if err != nil {
			return newError(errMalformed, -1, "", err) // the walk accepted it: cannot happen
		}
		if len(found) > 0 {
			maps = dialectMaps(found, o.NoCopy, arena)
		}
	}
	err := mpmsg.Unmarshal(data, v, maps, o.NoCopy, arena)
	var e *ndarray.Error
	if err != nil && !errors.As(err, &e) {
		return newError(errMalformed, -1, "", err)
	}
	return err
}

// dialectMaps decodes the maps a walk found to be dialects' arrays, when
// the msgpack library meets them as interface values.
func dialectMaps(found []msgarrays.Found, alias bool, arena *mpmsg.Arena) mpmsg.Maps {
	return func(msg []byte, at int) (any, int, error) {
		if _, ok := slices.BinarySearchFunc(found, at, func(f msgarrays.Found, at int) int { return f.At - at }); !ok {
			return nil, 0, nil
		}
		h, ok, err := msgarrays.Dialects.At(msg[at:])
		if err != nil || !ok {
			return nil, 0, err
		}
		if h.Scalar != nil || h.Fortran {
			return h.Array(msg[at:], alias), h.Len, nil
		}
		a := &ndarray.Array{DType: h.DType, Shape: h.Shape, Data: h.Data(msg[at:])}
		if !alias || !a.Aligned() {
			a.Data = arena.Copy(a.Data, 0) // once, aligned
		}
		return a, h.Len, nil
	}
}

// MarshalMessage encodes v as msgpack, as msgpack.Marshal would, with
// arrays (*ndarray.Array and ndarray.Array values) written as o.Encoding
// says: ext 110 when it is zero, or maps of that dialect. The keys of Go
// maps are written in sorted order, so that a value always encodes to the
// same bytes (a struct's fields, and a type's EncodeMsgpack, keep their
// own order).
//
// The message is drafted first with its large array data counted, not
// copied, then written into one buffer of exactly its size: an 8 MiB
// array costs one allocation of the message's size and one copy.
//
// It fails with the error of the codec that cannot carry an array: package
// dialect's for o.Encoding (dialect.ErrUnsupported, ErrStructured,
// ndarray.ErrMalformed), npybridge's for GR00T (npybridge.ErrInvalidArray:
// a dtype np.save cannot write), ext110's (ndarray.ErrNonstandard without
// AllowNonstandard, ndarray.ErrMalformed, ErrTooLarge); and with the
// msgpack library's error, which matches no sentinel, for a value msgpack
// cannot encode (a chan, a func).
func (o MessageOptions) MarshalMessage(v any) ([]byte, error) { return o.AppendMessage(nil, v) }

// AppendMessage is MarshalMessage appending the message to dst: where
// dst's capacity holds it, nothing is allocated for it, so that a sender
// of one message after another reuses one buffer (append to buf[:0]);
// otherwise dst grows once, to the exact size. It fails as
// MarshalMessage does, returning dst unchanged.
func (o MessageOptions) AppendMessage(dst []byte, v any) ([]byte, error) {
	var f mpmsg.Format
	switch {
	case o.Encoding == dialect.GR00T:
		f = gr00tFormat{}
	case o.Encoding != 0:
		f = o.Encoding
	case o.AllowNonstandard:
		f = nonstandard{}
	}
	return mpmsg.Append(dst, v, f)
}

// gr00tFormat writes GR00T's maps, whose arrays are .npy files.
type gr00tFormat struct{}

func (gr00tFormat) Append(dst []byte, a *ndarray.Array) ([]byte, error) {
	return gr00tmap.Append(dst, a)
}

func (gr00tFormat) Size(a *ndarray.Array) (int, error) { return gr00tmap.Size(a) }

// nonstandard writes ext 110 with AllowNonstandard.
type nonstandard struct{}

func (nonstandard) Append(dst []byte, a *ndarray.Array) ([]byte, error) {
	return ext110.Options{AllowNonstandard: true}.Append(dst, a)
}

func (nonstandard) Size(a *ndarray.Array) (int, error) { return ext110.Size(a) }

// errMalformed is ndarray.ErrMalformed as this package words it.
var errMalformed = codecerr.Class("malformed message", ndarray.ErrMalformed)

func newError(class error, off int64, detail string, cause error) error {
	return &ndarray.Error{Pkg: "ndpack", Err: class, Offset: off, Detail: detail, Cause: cause}
}

// walkClasses is how a message's walk fails in this package's terms.
var walkClasses = mpwalk.Classes{
	Invalid:     errMalformed,
	OverBudget:  ndarray.ErrTruncated,
	TooDeep:     ndarray.ErrTooDeep,
	TooCostly:   ndarray.ErrTooLarge,
	Ended:       ndarray.ErrTruncated,
	EndedDetail: "input ended inside the message",
}

// walkError turns a walker's error into the package's, offsets counted from
// base; an error not the walker's (a reader's) is returned as it is.
func walkError(err error, base int64) error {
	f := walkClasses.Classify(err)
	switch f.Kind {
	case mpwalk.NotWalk:
		return err
	case mpwalk.TooDeep: // the offset is the error's, not repeated in its words
		return newError(f.Class, base+f.Offset, fmt.Sprintf("arrays and maps nest more than %d deep", f.Limit), nil)
	}
	return newError(f.Class, -1, f.Detail, nil)
}
