// Package msgarrays finds the arrays of a msgpack message, in every
// encoding the module reads: YEP-110's ext type (package ext110) and the
// Python services' maps (package dialect). It is the one place the
// message path learns an encoding: the root package's message decoder,
// openpi's and the command line's find arrays here, each asking for the
// encodings it reads (a Set), and nothing else in the module tells an
// array from another value.
//
// At says whether a value is an array, and where its data lies; Find lists
// the arrays a message holds at any depth, by path; Decode turns a whole
// message into Go values around its arrays, with what that costs counted
// first (Cost).
//
// A value is taken for an array by how it starts: an ext of type 110, or
// a map with a dialect's marker key (dialect.Marker) first, as the packers
// write it, or anywhere among the keys of a map of 3 to 16 entries, the
// sizes the dialects' maps have (a sender may put it later). What is taken
// for one and is not a valid array is an error, never an ordinary value.
package msgarrays

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// Set is a set of array encodings: Ext110, and a bit for each dialect
// (Of). Every dialect package dialect has, and adds, is in All and
// Dialects.
type Set uint

const (
	// Ext110 is YEP-110's ext type.
	Ext110 Set = 1
	// All is every encoding; Dialects every dialect's map.
	All      = ^Set(0)
	Dialects = All &^ Ext110
)

// Of is the set of one dialect.
func Of(d dialect.Dialect) Set {
	if d <= 0 || int(d) >= bits.UintSize {
		return 0
	}
	return 1 << d
}

func (s Set) has(d dialect.Dialect) bool { return s&Of(d) != 0 }

// String names the encodings of s: "ext 110", "msgpack-numpy", "openpi",
// joined by " and ".
func (s Set) String() string {
	var names []string
	if s&Ext110 != 0 {
		names = append(names, "ext 110")
	}
	for d := dialect.Dialect(1); int(d) < bits.UintSize; d++ {
		if s.has(d) && !strings.HasPrefix(d.String(), "Dialect(") {
			names = append(names, d.String())
		}
	}
	return strings.Join(names, " and ")
}

// Header is an array found at the start of a message's bytes, without its
// data: its encoding, dtype, shape, and where the data lies.
type Header struct {
	Encoding   Set // one encoding: Ext110 or a dialect's
	DType      ndarray.DType
	Shape      []int
	DataOffset int // of the first data byte, from the array's first byte; -1 for Scalar
	DataLen    int
	Len        int // of the whole array, its ext header or map included
	// Scalar is the 0-d array of a dialect's numpy scalar, whose value is
	// a msgpack number rather than bytes.
	Scalar *ndarray.Array
}

// At says whether the value at the start of b is an array in one of s's
// encodings, and reads its header as its codec does (ext110.DecodeHeader,
// dialect.DecodeHeader). ok is false for another value: an ext of another
// type, a map without a marker of s's dialects. A value taken for an array
// that is not a valid one fails with its codec's error (ok is then true).
// Bytes after the value are allowed.
//
// A map's keys are read, its values stepped over, up to a marker: At reads
// a map in time linear in its bytes, and a decoder that asks it of every
// map of a deep message works in the square of the message's size; Find
// and Decode find markers as they read a message's keys, at no cost.
func (s Set) At(b []byte) (h Header, ok bool, err error) {
	if len(b) == 0 {
		return Header{}, false, nil
	}
	switch mpwire.HeadOf(b[0]).Type {
	case mpwire.ExtType:
		if !s.takesExt(b) {
			return Header{}, false, nil
		}
		return ext110Header(b)
	case mpwire.MapType:
		if _, marked := s.marked(b); !marked {
			return Header{}, false, nil
		}
		return s.dialectHeader(b)
	}
	return Header{}, false, nil
}

// takesExt reports whether the ext value at the start of b is taken for
// an array of s: ext 110's type, or a header cut short (for
// ext110.DecodeHeader to say so). At, Find and Decode all ask it.
func (s Set) takesExt(b []byte) bool {
	if s&Ext110 == 0 {
		return false
	}
	typ, _, _, err := mpwire.ReadExtHeaderUnchecked(b)
	return err != nil || typ == ext110.ExtType
}

func ext110Header(b []byte) (Header, bool, error) {
	h, err := ext110.DecodeHeader(b)
	if err != nil {
		return Header{}, true, err
	}
	return Header{Encoding: Ext110, DType: h.DType, Shape: h.Shape, DataOffset: h.DataOffset, DataLen: h.DataLen, Len: h.Len}, true, nil
}

// dialectHeader reads the dialect map at the start of b, which has a
// marker of one of s's dialects.
func (s Set) dialectHeader(b []byte) (Header, bool, error) {
	h, err := dialect.DecodeHeader(b)
	if err != nil {
		return Header{}, true, err
	}
	if !s.has(h.Dialect) {
		return Header{}, false, nil // marked for s and for another: the other's
	}
	return Header{Encoding: Of(h.Dialect), DType: h.DType, Shape: h.Shape, DataOffset: h.DataOffset, DataLen: h.DataLen, Len: h.Len, Scalar: h.Scalar}, true, nil
}

// The sizes of the maps in which a marker is looked for after the first
// key: the dialects' maps have 3 to 16 entries.
const (
	minMarked = 3
	maxMarked = 16
)

// markerOf reports whether a key marks an array of one of s's dialects.
func (s Set) markerOf(key []byte) bool {
	d, ok := dialect.Marker(key)
	return ok && s.has(d)
}

// marked reports whether the map at the start of b has a marker of one of
// s's dialects first, or among its keys if it has 3 to 16 entries, and
// whether it was the first.
func (s Set) marked(b []byte) (first, ok bool) {
	n, rest, err := mpwire.ReadMapHeaderBytes(b)
	if err != nil || n == 0 || s&Dialects == 0 {
		return false, false
	}
	for i := range n {
		key, after, err := mpwire.ReadStringOrBinZC(rest)
		if err == nil && s.markerOf(key) {
			return i == 0, true
		}
		if n < minMarked || n > maxMarked {
			return false, false
		}
		if err != nil { // a key that is no string: stepped over
			l, err := mpwalk.Len(rest, mpwalk.Limits{MaxDepth: MaxDepth})
			if err != nil {
				return false, false
			}
			after = rest[l:]
		}
		l, err := mpwalk.Len(after, mpwalk.Limits{MaxDepth: MaxDepth})
		if err != nil {
			return false, false
		}
		rest = after[l:]
	}
	return false, false
}

// Data returns the data bytes of h, which At read from b, as a slice of
// b; nil for a Scalar.
func (h Header) Data(b []byte) []byte {
	if h.Scalar != nil {
		return nil
	}
	end := h.DataOffset + h.DataLen
	return b[h.DataOffset:end:end]
}

// Array returns the array h describes, which At read from b: with alias,
// its Data is b's bytes where they lie aligned for its items (Aligned),
// and a copy, aligned, where they do not, so that typed access never
// copies it; without, a copy of its own.
func (h Header) Array(b []byte, alias bool) *ndarray.Array {
	if h.Scalar != nil {
		return h.Scalar
	}
	data := h.Data(b)
	a := &ndarray.Array{DType: h.DType, Shape: h.Shape, Data: data}
	if !alias || !a.Aligned() {
		// Appended to nothing rather than made and filled: an append
		// clears no byte it then overwrites. A new heap block is aligned
		// for every item size.
		a.Data = append([]byte{}, data...)
	}
	return a
}

// Error is a failure to walk or decode a message: its class (a sentinel
// of ndarray: ErrMalformed, ErrTruncated, ErrTooLarge, ErrTooDeep), where
// in the message (and by what path, when Find names what it finds), what,
// and the cause (a codec's error about an array). It reads "msgpack:
// CLASS at byte N: PATH: DETAIL: CAUSE"; callers may word it as their own.
type Error struct {
	Class  error
	Offset int
	Path   string
	Detail string
	Cause  error
}

func (e *Error) Error() string {
	detail := e.Detail
	if e.Path != "" {
		detail = e.Path + ": " + detail
	}
	return codecerr.Format("msgpack", e.Class, int64(e.Offset), detail, e.Cause)
}

func (e *Error) Unwrap() []error { return codecerr.Unwrap(e.Class, e.Cause) }

func errAt(class error, off int, format string, args ...any) *Error {
	return &Error{Class: class, Offset: off, Detail: fmt.Sprintf(format, args...)}
}
