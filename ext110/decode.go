package ext110

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/ndarray"
)

// Unmarshal decodes one ext 110 object that fills b exactly. The returned
// Array owns a copy of its data.
func Unmarshal(b []byte) (*ndarray.Array, error) { return unmarshal(b, false) }

// UnmarshalNoCopy is Unmarshal without the copy: the returned Array's Data
// aliases b, so b must not be modified while the Array is in use. Its cost
// does not depend on the size of the array.
func UnmarshalNoCopy(b []byte) (*ndarray.Array, error) { return unmarshal(b, true) }

func unmarshal(b []byte, alias bool) (*ndarray.Array, error) {
	p := parser{b: b}
	start, n, err := p.extHeader()
	if err != nil {
		return nil, err
	}
	if start+n != len(b) {
		return nil, errAt(ErrMalformed, start+n, "%d bytes after the ext 110 object", len(b)-start-n)
	}
	return decodePayload(b[start:], start, alias)
}

// Header describes an encoded ext 110 object without its data, like
// image.DecodeConfig: the dtype, the shape and where the data bytes lie.
type Header struct {
	DType      ndarray.DType
	Shape      []int
	DataOffset int // offset of the first data byte in the input
	DataLen    int // number of data bytes, shape times item size
	Len        int // length of the whole object
}

// DecodeHeader checks one ext 110 object at the start of b exactly as
// Unmarshal does, without copying its data, and returns where the data
// lies. Bytes after the object are allowed. Run over a memory-mapped file, it
// touches only the pages that hold the framing, so that the data can then be
// moved by other means (a kernel copy between files).
func DecodeHeader(b []byte) (Header, error) {
	p := parser{b: b}
	start, n, err := p.extHeader()
	if err != nil {
		return Header{}, err
	}
	q := parser{b: b[start : start+n], base: start}
	a, err := q.arrayMap()
	if err != nil {
		return Header{}, err
	}
	return Header{DType: a.DType, Shape: a.Shape, DataOffset: start + q.dataOff, DataLen: len(a.Data), Len: start + n}, nil
}

// decodePayload decodes an ext 110 payload (the map) that fills b; base is
// its offset in the caller's input, for error messages.
func decodePayload(b []byte, base int, alias bool) (*ndarray.Array, error) {
	p := parser{b: b, base: base}
	a, err := p.arrayMap()
	if err != nil {
		return nil, err
	}
	if !alias {
		a.Data = append(make([]byte, 0, len(a.Data)), a.Data...)
	}
	return a, nil
}

// parser reads msgpack from a byte slice. Every read checks the bytes that
// remain, so no length from the input is used before it is known to fit.
type parser struct {
	b       []byte
	off     int
	base    int // offset of b in the whole input, for error messages
	dataOff int // where arrayMap found the data bytes, relative to b
}

func (p *parser) pos() int { return p.base + p.off }

func (p *parser) truncated(what string, need int) error {
	return errAt(ErrTruncated, p.pos(), "%s needs %d bytes, %d remain", what, need, len(p.b)-p.off)
}

func (p *parser) take(n int, what string) ([]byte, error) {
	if n < 0 || n > len(p.b)-p.off {
		return nil, p.truncated(what, n)
	}
	s := p.b[p.off : p.off+n : p.off+n]
	p.off += n
	return s, nil
}

func (p *parser) byte(what string) (byte, error) {
	if p.off >= len(p.b) {
		return 0, p.truncated(what, 1)
	}
	c := p.b[p.off]
	p.off++
	return c, nil
}

// uintN reads a big-endian unsigned integer of width 1, 2, 4 or 8 bytes.
func (p *parser) uintN(width int, what string) (uint64, error) {
	s, err := p.take(width, what)
	if err != nil {
		return 0, err
	}
	switch width {
	case 1:
		return uint64(s[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(s)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(s)), nil
	}
	return binary.BigEndian.Uint64(s), nil
}

// length reads a width-byte length and checks that at least
// length*minItem bytes remain, so that callers may size things from it.
func (p *parser) length(width int, minItem int, what string) (int, error) {
	v, err := p.uintN(width, what)
	if err != nil {
		return 0, err
	}
	if v > uint64(len(p.b)-p.off)/uint64(minItem) {
		return 0, errAt(ErrTruncated, p.pos(), "%s claims %d, only %d bytes remain", what, v, len(p.b)-p.off)
	}
	return int(v), nil
}

// extHeader reads an ext header of type 110 and returns the offset and the
// length of its payload, which is known to fit in the input.
func (p *parser) extHeader() (start, n int, err error) {
	at := p.pos()
	if p.off >= len(p.b) {
		return 0, 0, p.truncated("ext header", 1)
	}
	size := extHeaderSize(p.b[p.off])
	if size == 0 {
		return 0, 0, errAt(ErrNotExt110, at, "msgpack type byte 0x%02x is not an ext header", p.b[p.off])
	}
	h, err := p.take(size, "ext header")
	if err != nil {
		return 0, 0, err
	}
	if err := checkExtType(h, at); err != nil {
		return 0, 0, err
	}
	l := extPayloadLen(h)
	if l > uint64(len(p.b)-p.off) {
		return 0, 0, errAt(ErrTruncated, at, "ext header claims a %d-byte payload, %d bytes remain", l, len(p.b)-p.off)
	}
	return p.pos(), int(l), nil
}

// extHeaderSize returns the length of the ext header that starts with the
// msgpack type byte c, type byte included, or 0 if c starts no ext.
func extHeaderSize(c byte) int {
	switch {
	case c >= 0xd4 && c <= 0xd8: // fixext 1..16
		return 2
	case c == 0xc7: // ext8
		return 3
	case c == 0xc8: // ext16
		return 4
	case c == 0xc9: // ext32
		return 6
	}
	return 0
}

// extPayloadLen returns the payload length of a complete ext header.
func extPayloadLen(h []byte) uint64 {
	switch h[0] {
	case 0xc7:
		return uint64(h[1])
	case 0xc8:
		return uint64(binary.BigEndian.Uint16(h[1:]))
	case 0xc9:
		return uint64(binary.BigEndian.Uint32(h[1:]))
	}
	return 1 << (h[0] - 0xd4)
}

// checkExtType checks the type byte, the last of a complete ext header found
// at offset at.
func checkExtType(h []byte, at int) error {
	if t := int8(h[len(h)-1]); t != ExtType {
		return errAt(ErrNotExt110, at+len(h)-1, "ext type %d, want %d", t, ExtType)
	}
	return nil
}

// The keys of the array map, as bits of a set.
const (
	keyData = 1 << iota
	keyTypestr
	keyShape
	keyVersion
	keyStrides
	keyOffset
)

// arrayMap reads the payload map, which must fill the parser's bytes.
func (p *parser) arrayMap() (*ndarray.Array, error) {
	at := p.pos()
	c, err := p.byte("payload")
	if err != nil {
		return nil, err
	}
	var entries int
	switch {
	case c >= 0x80 && c <= 0x8f:
		entries = int(c & 0x0f)
	case c == 0xde || c == 0xdf:
		// Each entry takes at least two bytes.
		if entries, err = p.length(2<<(c-0xde), 2, "map"); err != nil {
			return nil, err
		}
	default:
		return nil, errAt(ErrMalformed, at, "payload is msgpack type byte 0x%02x, not a map", c)
	}
	var (
		a    ndarray.Array
		seen int
	)
	for i := 0; i < entries; i++ {
		keyAt := p.pos()
		key, err := p.stringOrBin("map key")
		if err != nil {
			return nil, err
		}
		var bit int
		switch string(key) {
		case "data":
			bit = keyData
		case "typestr":
			bit = keyTypestr
		case "shape":
			bit = keyShape
		case "version":
			bit = keyVersion
		case "strides":
			bit = keyStrides
		case "offset":
			bit = keyOffset
		default:
			// Extra keys (descr, ...) are allowed by the YEP and ignored.
			if err := p.skip(); err != nil {
				return nil, err
			}
			continue
		}
		if seen&bit != 0 {
			return nil, errAt(ErrMalformed, keyAt, "duplicate key %q", key)
		}
		seen |= bit
		valAt := p.pos()
		switch bit {
		case keyData:
			a.Data, err = p.stringOrBin("data")
			p.dataOff = p.off - len(a.Data)
		case keyTypestr:
			var s []byte
			if s, err = p.stringOrBin("typestr"); err == nil {
				a.DType, err = parseTypestr(s, valAt)
			}
		case keyShape:
			a.Shape, err = p.shape()
		case keyVersion:
			// Any version is accepted: the YEP asks readers not to
			// reject objects of future versions of the interface.
			_, err = p.integer("version")
		case keyStrides:
			if c, e := p.byte("strides"); e != nil {
				err = e
			} else if c != 0xc0 {
				err = errAt(ErrStrided, valAt, "strides must be nil (the data must be C-contiguous)")
			}
		case keyOffset:
			// The array interface lets data start offset bytes in; the
			// reference reads there. Only nil and 0 describe data that
			// starts where the bytes do.
			if p.off < len(p.b) && p.b[p.off] == 0xc0 {
				p.off++
			} else if off, e := p.integer("offset"); e != nil {
				err = e
			} else if off != 0 {
				err = errAt(ErrOffset, valAt, "offset %d: the array must start at the first byte of data", off)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if p.off != len(p.b) {
		return nil, errAt(ErrMalformed, p.pos(), "%d bytes left over inside the ext payload after the map", len(p.b)-p.off)
	}
	for _, k := range requiredKeys {
		if seen&k.bit == 0 {
			return nil, errAt(ErrMalformed, at, "missing key %q", k.name)
		}
	}
	if err := a.Validate(); err != nil {
		return nil, newError(ErrMalformed, int64(at), "", err)
	}
	return &a, nil
}

var requiredKeys = [...]struct {
	bit  int
	name string
}{{keyShape, "shape"}, {keyTypestr, "typestr"}, {keyData, "data"}}

// standardDTypes holds the standard typestrs in canonical form. It is filled
// once and only read: indexing a map with string(bytes) does not copy, so the
// common case of decoding costs no allocation for the typestr.
var standardDTypes = func() map[string]ndarray.DType {
	m := map[string]ndarray.DType{}
	for _, kind := range "biufc" {
		for _, size := range []int{1, 2, 4, 8, 16, 32} {
			for _, order := range "<>|" {
				s := string(order) + string(kind) + strconv.Itoa(size)
				if dt, err := ndarray.ParseDType(s); err == nil && dt.String() == s {
					m[s] = dt
				}
			}
		}
	}
	return m
}()

func parseTypestr(s []byte, at int) (ndarray.DType, error) {
	if dt, ok := standardDTypes[string(s)]; ok {
		return dt, nil
	}
	dt, err := ndarray.ParseDType(string(s))
	if err != nil {
		return dt, newError(ErrMalformed, int64(at), "", err)
	}
	return dt, nil
}

// stringOrBin reads a str or bin value: older packers send bytes as str.
func (p *parser) stringOrBin(what string) ([]byte, error) {
	at := p.pos()
	c, err := p.byte(what)
	if err != nil {
		return nil, err
	}
	var n int
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xda || c == 0xdb:
		n, err = p.length(1<<(c-0xd9), 1, what)
	case c == 0xc4 || c == 0xc5 || c == 0xc6:
		n, err = p.length(1<<(c-0xc4), 1, what)
	default:
		return nil, errAt(ErrMalformed, at, "%s is msgpack type byte 0x%02x, not str or bin", what, c)
	}
	if err != nil {
		return nil, err
	}
	return p.take(n, what)
}

// shape reads an array of non-negative integers of any msgpack width.
func (p *parser) shape() ([]int, error) {
	at := p.pos()
	c, err := p.byte("shape")
	if err != nil {
		return nil, err
	}
	var n int
	switch {
	case c >= 0x90 && c <= 0x9f:
		n = int(c & 0x0f)
	case c == 0xdc || c == 0xdd:
		// Each dimension takes at least one byte: this bounds the
		// allocation below by the input's size.
		if n, err = p.length(2<<(c-0xdc), 1, "shape"); err != nil {
			return nil, err
		}
	default:
		return nil, errAt(ErrMalformed, at, "shape is msgpack type byte 0x%02x, not an array", c)
	}
	shape := make([]int, n)
	for i := range shape {
		dimAt := p.pos()
		v, err := p.integer("shape entry")
		if err != nil {
			return nil, err
		}
		if v < 0 {
			return nil, newError(ErrMalformed, int64(dimAt), "", &ndarray.Error{Err: ndarray.ErrShape, Detail: fmt.Sprintf("dimension %d is negative (%d)", i, v)})
		}
		shape[i] = int(v)
	}
	return shape, nil
}

// integer reads a msgpack integer of any width that fits in an int.
func (p *parser) integer(what string) (int, error) {
	at := p.pos()
	c, err := p.byte(what)
	if err != nil {
		return 0, err
	}
	switch {
	case c <= 0x7f:
		return int(c), nil
	case c >= 0xe0:
		return int(int8(c)), nil
	case c >= 0xcc && c <= 0xcf:
		v, err := p.uintN(1<<(c-0xcc), what)
		if err != nil {
			return 0, err
		}
		if v > math.MaxInt {
			return 0, newError(ErrMalformed, int64(at), "", &ndarray.Error{Err: ndarray.ErrShape, Detail: fmt.Sprintf("%s %d overflows int", what, v)})
		}
		return int(v), nil
	case c >= 0xd0 && c <= 0xd3:
		width := 1 << (c - 0xd0)
		v, err := p.uintN(width, what)
		if err != nil {
			return 0, err
		}
		shift := 64 - 8*width // sign-extend
		return int(int64(v<<shift) >> shift), nil
	}
	return 0, errAt(ErrMalformed, at, "%s is msgpack type byte 0x%02x, not an integer", what, c)
}

// skip passes over one msgpack value of any type (an extra key's value).
func (p *parser) skip() error {
	at := p.pos()
	// The walker reads through an interface, which would move p to the
	// heap on every decode; a sub-parser confines that to this rare path.
	q := &parser{b: p.b[p.off:], base: at}
	n, err := mpwalk.Value(walkSource{q}, int64(len(q.b)), mpwalk.Limits{})
	p.off += int(n)
	var budget *mpwalk.BudgetError
	var invalid *mpwalk.InvalidError
	switch {
	case errors.As(err, &budget):
		return errAt(ErrTruncated, at, "%v", budget)
	case errors.As(err, &invalid):
		return errAt(ErrMalformed, at, "%v", invalid)
	}
	return err
}

// walkSource lets mpwalk read through the parser, whose reads check bounds.
type walkSource struct{ p *parser }

func (s walkSource) ReadByte() (byte, error) { return s.p.byte("value") }

func (s walkSource) Discard(n int) error {
	_, err := s.p.take(n, "value")
	return err
}
