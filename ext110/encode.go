package ext110

import (
	"fmt"
	"math"
	"slices"

	"github.com/ndpack/ndpack/ndarray"
)

// ExtType is the msgpack extension type code of YEP-110 arrays ('n').
const ExtType = 110

// MaxPayload is the largest ext payload msgpack can frame (ext32).
const MaxPayload = math.MaxUint32

// Options controls encoding. The zero value is the default.
type Options struct {
	// AllowNonstandard lets arrays of NumPy kinds outside YEP-110's
	// standard list (S, U, V, M8, m8) be encoded. The reference Python
	// peers read them, but the YEP discourages sending them.
	AllowNonstandard bool
}

// Marshal returns the ext 110 encoding of a with the default Options.
func Marshal(a *ndarray.Array) ([]byte, error) { return Options{}.Marshal(a) }

// Append appends the ext 110 encoding of a to dst with the default Options
// and returns the extended slice. dst is grown at most once.
func Append(dst []byte, a *ndarray.Array) ([]byte, error) { return Options{}.Append(dst, a) }

// Size returns the exact length of the ext 110 encoding of a.
func Size(a *ndarray.Array) (int, error) {
	l, err := Options{AllowNonstandard: true}.layoutOf(a)
	return l.total, err
}

// Marshal returns the ext 110 encoding of a.
func (o Options) Marshal(a *ndarray.Array) ([]byte, error) {
	l, err := o.layoutOf(a)
	if err != nil {
		return nil, err
	}
	return l.appendTo(make([]byte, 0, l.total), a.Data), nil
}

// Append appends the ext 110 encoding of a to dst and returns the extended
// slice; dst is grown at most once, to the exact size.
func (o Options) Append(dst []byte, a *ndarray.Array) ([]byte, error) {
	l, err := o.layoutOf(a)
	if err != nil {
		return dst, err
	}
	return l.appendTo(slices.Grow(dst, l.total), a.Data), nil
}

// layout is an encoded object split around its data bytes: the canonical
// key order puts data first, so the encoding is prefix, data, suffix. The
// split lets streams write the data without copying it.
type layout struct {
	ts      [32]byte // the typestr, held by value so a layout needs no allocation
	tsLen   int
	shape   []int
	dataLen int
	payload int // ext payload length
	total   int // whole object, ext header included
}

// layoutOf validates a against the options and sizes its encoding.
func (o Options) layoutOf(a *ndarray.Array) (layout, error) {
	if err := a.Validate(); err != nil {
		return layout{}, newError(ErrMalformed, -1, "cannot encode", err)
	}
	return o.layoutFor(a.DType, a.Shape, len(a.Data))
}

// layoutFor sizes the encoding of an array of the given dtype and shape
// with dataLen data bytes, which the caller has checked.
func (o Options) layoutFor(dt ndarray.DType, shape []int, dataLen int) (layout, error) {
	if !dt.IsStandard() && !o.AllowNonstandard {
		return layout{}, newError(ErrNonstandard, -1, fmt.Sprintf("%s is outside YEP-110's standard kinds (b, i, u, f, c); set Options.AllowNonstandard to send it", dt), nil)
	}
	l := layout{shape: shape, dataLen: dataLen}
	ts, _ := dt.AppendText(l.ts[:0])
	l.tsLen = len(ts)
	// The payload map: fixmap header and the four keys with their values.
	n := 1 + len("\xa4data") + binHeaderLen(dataLen) + dataLen +
		len("\xa7typestr") + strHeaderLen(l.tsLen) + l.tsLen +
		len("\xa5shape") + arrayHeaderLen(len(shape)) +
		len("\xa7version") + 1
	for _, d := range shape {
		n += uintLen(uint64(d))
	}
	if uint64(n) > MaxPayload {
		return layout{}, newError(ErrTooLarge, -1, fmt.Sprintf("payload of %d bytes exceeds the ext32 limit of %d", n, uint64(MaxPayload)), nil)
	}
	l.payload = n
	l.total = extHeaderLen(n) + n
	return l, nil
}

func (l layout) appendTo(b []byte, data []byte) []byte {
	b = l.appendPrefix(b)
	b = append(b, data...)
	return l.appendSuffix(b)
}

// appendPrefix appends everything before the data bytes.
func (l layout) appendPrefix(b []byte) []byte {
	b = appendExtHeader(b, l.payload)
	b = append(b, 0x84, 0xa4, 'd', 'a', 't', 'a')
	return appendBinHeader(b, l.dataLen)
}

// appendSuffix appends everything after the data bytes.
func (l layout) appendSuffix(b []byte) []byte {
	b = append(b, "\xa7typestr"...)
	b = appendStrHeader(b, l.tsLen)
	b = append(b, l.ts[:l.tsLen]...)
	b = append(b, "\xa5shape"...)
	b = appendArrayHeader(b, len(l.shape))
	for _, d := range l.shape {
		b = appendUint(b, uint64(d))
	}
	return append(b, "\xa7version\x03"...)
}

// The msgpack forms below are the ones msgpack-python 1.0 picks: the
// smallest that holds the value.

func extHeaderLen(n int) int {
	switch {
	case n == 1 || n == 2 || n == 4 || n == 8 || n == 16:
		return 2
	case n <= math.MaxUint8:
		return 3
	case n <= math.MaxUint16:
		return 4
	}
	return 6
}

func appendExtHeader(b []byte, n int) []byte {
	switch {
	case n == 1:
		return append(b, 0xd4, ExtType)
	case n == 2:
		return append(b, 0xd5, ExtType)
	case n == 4:
		return append(b, 0xd6, ExtType)
	case n == 8:
		return append(b, 0xd7, ExtType)
	case n == 16:
		return append(b, 0xd8, ExtType)
	case n <= math.MaxUint8:
		return append(b, 0xc7, byte(n), ExtType)
	case n <= math.MaxUint16:
		return append(b, 0xc8, byte(n>>8), byte(n), ExtType)
	}
	return append(b, 0xc9, byte(n>>24), byte(n>>16), byte(n>>8), byte(n), ExtType)
}

func binHeaderLen(n int) int {
	switch {
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

func appendBinHeader(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xc5, byte(n>>8), byte(n))
	}
	return append(b, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func strHeaderLen(n int) int {
	switch {
	case n < 32:
		return 1
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

func appendStrHeader(b []byte, n int) []byte {
	switch {
	case n < 32:
		return append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xda, byte(n>>8), byte(n))
	}
	return append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func arrayHeaderLen(n int) int {
	switch {
	case n < 16:
		return 1
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xdc, byte(n>>8), byte(n))
	}
	return append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func uintLen(v uint64) int {
	switch {
	case v < 128:
		return 1
	case v <= math.MaxUint8:
		return 2
	case v <= math.MaxUint16:
		return 3
	case v <= math.MaxUint32:
		return 5
	}
	return 9
}

func appendUint(b []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return append(b, 0xcd, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		return append(b, 0xce, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, 0xcf, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}
