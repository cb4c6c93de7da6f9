package mpwire

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sizes are the lengths and counts around every boundary of the formats.
var sizes = []int{0, 1, 2, 3, 4, 8, 15, 16, 17, 31, 32, 33, 255, 256, 65535, 65536, 70000}

// ints are the integers around every boundary of the formats.
var ints = []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
	-1, -31, -32, -33, -127, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}

// encoding is one valid msgpack value with what the readers should find.
type encoding struct {
	name  string
	typ   Type
	b     []byte
	n     int     // the count or length a header reader returns
	i     int64   // an integer's value
	u     uint64  // an unsigned integer's value, when uns
	uns   bool    // the value is read as uint64 only
	f     float64 // a float's value
	bool  bool
	extTy int8
}

// encodings returns a valid value of every type and boundary size, built
// with the appenders (whose bytes TestAppendersMatchMsgpackPython checks).
// Arrays and maps hold fixints, the smallest items, so that cutting any
// byte off makes their count claim too much.
func encodings() []encoding {
	var out []encoding
	for _, n := range sizes {
		out = append(out,
			encoding{name: "map", typ: MapType, n: n, b: append(AppendMapHeader(nil, n), make([]byte, 2*n)...)},
			encoding{name: "array", typ: ArrayType, n: n, b: append(AppendArrayHeader(nil, n), make([]byte, n)...)},
			encoding{name: "str", typ: StrType, n: n, b: AppendString(nil, strings.Repeat("a", n))},
			encoding{name: "bin", typ: BinType, n: n, b: AppendBytes(nil, bytes.Repeat([]byte{7}, n))},
			encoding{name: "ext", typ: ExtType, n: n, extTy: -3, b: append(AppendExtHeader(nil, -3, n), make([]byte, n)...)},
		)
	}
	for _, v := range ints {
		out = append(out, encoding{name: "int", typ: NextType(AppendInt(nil, v)), i: v, u: uint64(v), b: AppendInt(nil, v)})
	}
	out = append(out, encoding{name: "uint64 max", typ: UintType, u: math.MaxUint64, uns: true, b: AppendUint(nil, math.MaxUint64)})
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5, math.Inf(-1), math.MaxFloat64} {
		out = append(out, encoding{name: "float64", typ: Float64Type, f: f, b: AppendFloat64(nil, f)})
	}
	out = append(out,
		encoding{name: "float32", typ: Float32Type, f: 1.5, b: []byte{0xca, 0x3f, 0xc0, 0, 0}},
		encoding{name: "nil", typ: NilType, b: AppendNil(nil)},
		encoding{name: "true", typ: BoolType, bool: true, b: AppendBool(nil, true)},
		encoding{name: "false", typ: BoolType, b: AppendBool(nil, false)},
	)
	return out
}

// reader is one of the package's readers, reduced to a common form.
type reader struct {
	name    string
	accepts []Type
	read    func(b []byte) (rest []byte, err error)
	check   func(t *testing.T, e encoding, b []byte) // the value read from e.b (b is e.b plus a trailing byte)
}

func readers() []reader {
	return []reader{
		{"ReadMapHeaderBytes", []Type{MapType}, func(b []byte) ([]byte, error) { _, r, err := ReadMapHeaderBytes(b); return r, err },
			func(t *testing.T, e encoding, b []byte) {
				n, rest, err := ReadMapHeaderBytes(b)
				require.NoError(t, err)
				assert.Equal(t, e.n, n)
				assert.Equal(t, len(b)-MapHeaderSize(n), len(rest))
			}},
		{"ReadArrayHeaderBytes", []Type{ArrayType}, func(b []byte) ([]byte, error) { _, r, err := ReadArrayHeaderBytes(b); return r, err },
			func(t *testing.T, e encoding, b []byte) {
				n, rest, err := ReadArrayHeaderBytes(b)
				require.NoError(t, err)
				assert.Equal(t, e.n, n)
				assert.Equal(t, len(b)-ArrayHeaderSize(n), len(rest))
			}},
		{"ReadStringZC", []Type{StrType}, func(b []byte) ([]byte, error) { _, r, err := ReadStringZC(b); return r, err }, checkZC(ReadStringZC)},
		{"ReadBytesZC", []Type{BinType}, func(b []byte) ([]byte, error) { _, r, err := ReadBytesZC(b); return r, err }, checkZC(ReadBytesZC)},
		{"ReadStringOrBinZC", []Type{StrType, BinType}, func(b []byte) ([]byte, error) { _, r, err := ReadStringOrBinZC(b); return r, err }, checkZC(ReadStringOrBinZC)},
		{"ReadExtHeaderBytes", []Type{ExtType}, func(b []byte) ([]byte, error) { _, _, r, err := ReadExtHeaderBytes(b); return r, err },
			func(t *testing.T, e encoding, b []byte) {
				typ, n, rest, err := ReadExtHeaderBytes(b)
				require.NoError(t, err)
				assert.Equal(t, e.extTy, typ)
				assert.Equal(t, e.n, n)
				assert.Equal(t, len(b)-ExtHeaderSize(n), len(rest))
			}},
		{"ReadIntBytes", []Type{IntType, UintType}, func(b []byte) ([]byte, error) { _, r, err := ReadIntBytes(b); return r, err },
			func(t *testing.T, e encoding, b []byte) {
				v, rest, err := ReadIntBytes(b)
				require.NoError(t, err)
				assert.Equal(t, e.i, v)
				assert.Len(t, rest, 1)
			}},
		{"ReadUintBytes", []Type{IntType, UintType}, func(b []byte) ([]byte, error) { _, r, err := ReadUintBytes(b); return r, err },
			func(t *testing.T, e encoding, b []byte) {
				v, rest, err := ReadUintBytes(b)
				require.NoError(t, err)
				assert.Equal(t, e.u, v)
				assert.Len(t, rest, 1)
			}},
		{"ReadFloat64Bytes", []Type{Float32Type, Float64Type}, func(b []byte) ([]byte, error) { _, r, err := ReadFloat64Bytes(b); return r, err },
			func(t *testing.T, e encoding, b []byte) {
				v, rest, err := ReadFloat64Bytes(b)
				require.NoError(t, err)
				assert.Equal(t, math.Float64bits(e.f), math.Float64bits(v))
				assert.Len(t, rest, 1)
			}},
		{"ReadBoolBytes", []Type{BoolType}, func(b []byte) ([]byte, error) { _, r, err := ReadBoolBytes(b); return r, err },
			func(t *testing.T, e encoding, b []byte) {
				v, rest, err := ReadBoolBytes(b)
				require.NoError(t, err)
				assert.Equal(t, e.bool, v)
				assert.Len(t, rest, 1)
			}},
		{"ReadNilBytes", []Type{NilType}, ReadNilBytes,
			func(t *testing.T, e encoding, b []byte) {
				rest, err := ReadNilBytes(b)
				require.NoError(t, err)
				assert.Len(t, rest, 1)
			}},
		{"ReadExtHeaderUnchecked", []Type{ExtType}, func(b []byte) ([]byte, error) { _, _, r, err := ReadExtHeaderUnchecked(b); return r, err },
			func(t *testing.T, e encoding, b []byte) {
				typ, n, rest, err := ReadExtHeaderUnchecked(b)
				require.NoError(t, err)
				assert.Equal(t, e.extTy, typ)
				assert.Equal(t, uint32(e.n), n)
				assert.Equal(t, len(b)-ExtHeaderSize(e.n), len(rest))
			}},
	}
}

func checkZC(read func([]byte) ([]byte, []byte, error)) func(t *testing.T, e encoding, b []byte) {
	return func(t *testing.T, e encoding, b []byte) {
		v, rest, err := read(b)
		require.NoError(t, err)
		require.Len(t, v, e.n)
		assert.Equal(t, len(v), cap(v), "appending to the value must not reach the bytes after it")
		assert.Equal(t, b[len(b)-len(rest)-e.n:len(b)-len(rest)], v)
		if e.n > 0 {
			assert.Same(t, &b[len(b)-len(rest)-e.n], &v[0], "the value must alias the input")
		}
		assert.Len(t, rest, 1)
	}
}

func accepts(r reader, typ Type) bool {
	for _, t := range r.accepts {
		if t == typ {
			return true
		}
	}
	return false
}

// TestReadersReadEveryEncoding: each reader reads every valid value of its
// types, leaving exactly what follows, and refuses every other type with
// ErrType at offset 0, naming the byte it found.
func TestReadersReadEveryEncoding(t *testing.T) {
	for _, r := range readers() {
		for _, e := range encodings() {
			b := append(append([]byte{}, e.b...), 0xc1)
			if !accepts(r, e.typ) {
				rest, err := r.read(b)
				var we *Error
				require.ErrorAs(t, err, &we, "%s of %s", r.name, e.name)
				assert.ErrorIs(t, err, ErrType)
				assert.Equal(t, 0, we.Offset)
				assert.Equal(t, b[0], we.Byte)
				assert.Equal(t, b, rest, "rest is the input on error")
				continue
			}
			if r.name == "ReadIntBytes" && e.uns || r.name == "ReadUintBytes" && e.i < 0 {
				_, err := r.read(b)
				assert.ErrorIs(t, err, ErrRange, "%s of %s %d", r.name, e.name, e.i)
				continue
			}
			if r.name == "ReadExtHeaderUnchecked" {
				// The payload need not follow.
				r.check(t, e, append(append([]byte{}, e.b[:ExtHeaderSize(e.n)]...), 0xc1))
				continue
			}
			r.check(t, e, b)
		}
	}
}

// TestReadersRefuseEveryTruncation: every reader, given any strict prefix
// of a value it reads (arrays and maps with the least their counts need),
// fails with ErrTruncated, and says where and how much.
func TestReadersRefuseEveryTruncation(t *testing.T) {
	cases := 0
	for _, r := range readers() {
		for _, e := range encodings() {
			if !accepts(r, e.typ) || r.name == "ReadIntBytes" && e.uns || r.name == "ReadUintBytes" && e.i < 0 {
				continue
			}
			whole := e.b
			if r.name == "ReadExtHeaderUnchecked" {
				whole = e.b[:ExtHeaderSize(e.n)]
			}
			for i := 0; i < len(whole); i++ {
				// Plain checks: there are a million and a half cuts.
				cases++
				cut := whole[:i:i]
				rest, err := r.read(cut)
				if i > 0 && e.n < 16 && (e.typ == MapType || e.typ == ArrayType) {
					// A fix count is left to the items' reader.
					if err != nil || len(rest) != i-1 {
						t.Fatalf("%s of %s cut to %d: %v", r.name, e.name, i, err)
					}
					continue
				}
				var we *Error
				if !errors.As(err, &we) || !errors.Is(err, ErrTruncated) {
					t.Fatalf("%s of %s (%d bytes) cut to %d: %v", r.name, e.name, len(whole), i, err)
				}
				need := we.Need
				if we.Claim && HeadOf(we.Byte).Type == MapType {
					need *= 2 // an entry takes two bytes at least
				}
				if len(rest) != i || we.Offset > i || we.Remain != i-we.Offset || need <= uint64(we.Remain) {
					t.Fatalf("%s of %s cut to %d: rest %d bytes: %v (offset %d, need %d, remain %d)", r.name, e.name, i, len(rest), err, we.Offset, we.Need, we.Remain)
				}
				if i == 0 {
					assert.Equal(t, "mpwire: truncated input at byte 0: want "+we.Want+", the input is empty", err.Error())
				}
			}
		}
	}
	t.Logf("%d truncations refused", cases)
}

func TestErrorMessages(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		read func([]byte) ([]byte, error)
		want string
	}{
		{[]byte{0x93, 1, 2, 3}, func(b []byte) ([]byte, error) { _, r, err := ReadMapHeaderBytes(b); return r, err },
			"mpwire: wrong type at byte 0: want map, found type byte 0x93 (array)"},
		{[]byte{0xc1}, func(b []byte) ([]byte, error) { _, r, err := ReadStringOrBinZC(b); return r, err },
			"mpwire: wrong type at byte 0: want str or bin, found type byte 0xc1 (invalid)"},
		{[]byte{0xdf, 0xff, 0xff, 0xff, 0xff, 1, 2, 3}, func(b []byte) ([]byte, error) { _, r, err := ReadMapHeaderBytes(b); return r, err },
			"mpwire: truncated input at byte 5: map claims 4294967295 entries, only 3 bytes remain"},
		{[]byte{0xde, 0, 2, 1, 2, 3}, func(b []byte) ([]byte, error) { _, r, err := ReadMapHeaderBytes(b); return r, err },
			"mpwire: truncated input at byte 3: map claims 2 entries, only 3 bytes remain"},
		{[]byte{0xdc, 0, 9, 1}, func(b []byte) ([]byte, error) { _, r, err := ReadArrayHeaderBytes(b); return r, err },
			"mpwire: truncated input at byte 3: array claims 9 items, only 1 byte remains"},
		{[]byte{0xc5, 1, 0, 1}, func(b []byte) ([]byte, error) { _, r, err := ReadBytesZC(b); return r, err },
			"mpwire: truncated input at byte 3: bin claims 256 bytes, only 1 remains"},
		{[]byte{0xc9, 0, 0}, func(b []byte) ([]byte, error) { _, _, r, err := ReadExtHeaderBytes(b); return r, err },
			"mpwire: truncated input at byte 0: ext header needs 6 bytes, 3 remain"},
		{[]byte{0xcd, 1}, func(b []byte) ([]byte, error) { _, r, err := ReadIntBytes(b); return r, err },
			"mpwire: truncated input at byte 0: uint header needs 3 bytes, 2 remain"},
		{[]byte{0xcf, 0xff, 0, 0, 0, 0, 0, 0, 0}, func(b []byte) ([]byte, error) { _, r, err := ReadIntBytes(b); return r, err },
			"mpwire: integer out of range at byte 0: want int64, found a uint64 over 2^63-1 (type byte 0xcf)"},
		{[]byte{0xff}, func(b []byte) ([]byte, error) { _, r, err := ReadUintBytes(b); return r, err },
			"mpwire: integer out of range at byte 0: want uint64, found a negative integer (type byte 0xff)"},
		{nil, ReadNilBytes, "mpwire: truncated input at byte 0: want nil, the input is empty"},
	} {
		_, err := c.read(c.in)
		assert.EqualError(t, err, c.want)
	}
}

// TestHeadOf: every type byte's head agrees with the readers, and the
// sizes the appenders promise are the sizes they write.
func TestHeadOf(t *testing.T) {
	for _, e := range encodings() {
		h := HeadOf(e.b[0])
		assert.Equal(t, e.typ, h.Type, e.name)
		switch e.typ {
		case MapType, ArrayType, StrType, BinType, ExtType:
			l := e.n // the bytes of the payload, or of the fixint items
			if e.typ == MapType {
				l = 2 * e.n
			}
			assert.Equal(t, len(e.b), h.Size()+l, "%s %d", e.name, e.n)
			if h.LenSize == 0 {
				assert.Equal(t, e.n, h.Len, "%s %d", e.name, e.n)
			}
		default:
			assert.Equal(t, len(e.b), h.Size()+h.Len, e.name)
		}
	}
	assert.Equal(t, InvalidType, HeadOf(0xc1).Type)
	assert.Equal(t, InvalidType, NextType(nil))
	for _, n := range append(sizes, math.MaxUint16+1, MaxLen) {
		assert.Len(t, AppendMapHeader(nil, n), MapHeaderSize(n))
		assert.Len(t, AppendArrayHeader(nil, n), ArrayHeaderSize(n))
		assert.Len(t, AppendStringHeader(nil, n), StringHeaderSize(n))
		assert.Len(t, AppendBinHeader(nil, n), BinHeaderSize(n))
		assert.Len(t, AppendExtHeader(nil, 1, n), ExtHeaderSize(n))
	}
	for _, v := range ints {
		assert.Len(t, AppendInt(nil, v), IntSize(v))
		assert.Len(t, AppendUint(nil, uint64(v)), UintSize(uint64(v)))
	}
	for c := 0; c < 256; c++ {
		name := HeadOf(byte(c)).Type.String()
		assert.NotContains(t, name, "Type(", "0x%02x", c)
	}
}

// TestReadersAllocateNothing: the readers allocate nothing when they
// succeed, whatever the size they read.
func TestReadersAllocateNothing(t *testing.T) {
	big := AppendBytes(nil, make([]byte, 1<<20))
	m := append(AppendMapHeader(nil, 70000), make([]byte, 140000)...)
	s := AppendString(nil, "typestr")
	i := AppendInt(nil, math.MinInt64)
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := ReadBytesZC(big); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadMapHeaderBytes(m); err != nil {
			t.Fatal(err)
		}
		if v, _, err := ReadStringOrBinZC(s); err != nil || string(v) != "typestr" {
			t.Fatal(err)
		}
		if _, _, err := ReadIntBytes(i); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := ReadExtHeaderBytes(big); !errors.Is(err, ErrType) {
			t.Fatal(err)
		}
	})
	// The last read fails on purpose: only its error may allocate.
	assert.LessOrEqual(t, allocs, 1.0)
	allocs = testing.AllocsPerRun(100, func() {
		if _, _, err := ReadBytesZC(big); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadStringOrBinZC(s); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

// TestDescribe: the codecs' wording of each failure, at the offsets they
// report.
func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		in        []byte
		off       int
		detail    string
		truncated bool
	}{
		{nil, 0, "typestr needs 1 byte, 0 remain", true},
		{[]byte{0x93}, 0, "typestr is msgpack type byte 0x93, not str or bin", false},
		{[]byte{0xa5, 'a'}, 1, "typestr needs 5 bytes, 1 remains", true},
		{[]byte{0xd9, 5, 'a'}, 2, "len claims 5, only 1 byte remains", true},
		{[]byte{0xda, 1}, 1, "len needs 2 bytes, 1 remains", true},
	} {
		_, _, err := ReadStringOrBinZC(c.in)
		off, detail, truncated := Describe(err, "typestr", "len", "str or bin")
		assert.Equal(t, c.off, off, "% x", c.in)
		assert.Equal(t, c.detail, detail)
		assert.Equal(t, c.truncated, truncated)
	}
	_, _, err := ReadUintBytes([]byte{0xff})
	_, detail, truncated := Describe(err, "dim", "dim", "an integer")
	assert.Equal(t, "dim is out of range for uint64", detail)
	assert.False(t, truncated)
}
