package zarr

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/ndpack/ndpack/internal/float16"
	"github.com/ndpack/ndpack/ndarray"
)

// Fill values are kept as one item's bytes, in the dtype's layout and
// byte order, which a missing chunk is filled with; nil is JSON null
// (zarr-python leaves such a chunk's elements unset; ndpack makes them
// zero bytes).

// parseFill reads a .zarray's fill_value for dt as zarr-python's
// decode_fill_value does: null; a number (or, for floats, "NaN",
// "Infinity" and "-Infinity"); for complex numbers a [real, imag] pair;
// base64 text for S and V (records included); a string for U; the int64
// of a datetime or timedelta; true or false for bool.
func parseFill(raw json.RawMessage, dt ndarray.DType) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	bad := func(want string) ([]byte, error) {
		return nil, errAt(errMetadata, -1, "fill_value %s is not %s, as a %s fill value must be", quoteJSON(raw), want, dt)
	}
	item := make([]byte, dt.ItemSize)
	order := byteOrder(dt)
	switch dt.Kind {
	case 'b':
		switch string(raw) {
		case "true", "1":
			item[0] = 1
		case "false", "0":
		default:
			return bad("true or false")
		}
	case 'i', 'u', 'M', 'm':
		v, ok := jsonInteger(raw, dt.Kind == 'u')
		if !ok || !fitsInt(v, dt) {
			return bad("an integer of its range")
		}
		putInt(item, v, order)
	case 'f':
		f, ok := jsonFloat(raw)
		if !ok || !putFloat(item, f, order) {
			return bad("a number, \"NaN\", \"Infinity\" or \"-Infinity\"")
		}
	case 'c':
		var pair []json.RawMessage
		if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
			return bad("a [real, imag] pair")
		}
		half := dt.ItemSize / 2
		for i, part := range pair {
			f, ok := jsonFloat(part)
			if !ok || !putFloat(item[i*half:(i+1)*half], f, order) {
				return bad("a [real, imag] pair of numbers")
			}
		}
	case 'S', 'V':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return bad("base64 text")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || dt.Kind == 'V' && len(b) != dt.ItemSize {
			return bad("base64 text of " + strconv.Itoa(dt.ItemSize) + " bytes")
		}
		if len(b) > dt.ItemSize {
			return bad("base64 text of at most " + strconv.Itoa(dt.ItemSize) + " bytes")
		}
		copy(item, b)
	case 'U':
		var s string
		if json.Unmarshal(raw, &s) != nil || utf8.RuneCountInString(s) > dt.ItemSize/4 {
			return bad("a string of at most " + strconv.Itoa(dt.ItemSize/4) + " characters")
		}
		i := 0
		for _, r := range s {
			order.PutUint32(item[i:], uint32(r))
			i += 4
		}
	default:
		return nil, errAt(ErrUnsupported, -1, "fill_value for %s", dt)
	}
	return item, nil
}

// fillValue is the JSON value zarr-python's encode_fill_value writes for
// the item fill (nil: null).
func fillValue(fill []byte, dt ndarray.DType) (any, error) {
	if fill == nil {
		return nil, nil
	}
	if len(fill) != dt.ItemSize {
		return nil, errAt(ErrUnsupported, -1, "a fill value of %d bytes for %s, whose items are %d", len(fill), dt, dt.ItemSize)
	}
	order := byteOrder(dt)
	switch dt.Kind {
	case 'b':
		return fill[0] != 0, nil
	case 'i', 'M', 'm':
		return getInt(fill, order), nil
	case 'u':
		return getUint(fill, order), nil
	case 'f':
		f, ok := getFloat(fill, order)
		if !ok {
			break
		}
		return floatValue(f), nil
	case 'c':
		half := dt.ItemSize / 2
		re, ok1 := getFloat(fill[:half], order)
		im, ok2 := getFloat(fill[half:], order)
		if !ok1 || !ok2 {
			break
		}
		return []any{floatValue(re), floatValue(im)}, nil
	case 'S':
		// numpy's bytes_ scalar, which zarr-python encodes, ends at its
		// first trailing NUL.
		return base64.StdEncoding.EncodeToString(bytes.TrimRight(fill, "\x00")), nil
	case 'V':
		return base64.StdEncoding.EncodeToString(fill), nil
	case 'U':
		var runes []rune
		for i := 0; i < len(fill); i += 4 {
			r := rune(order.Uint32(fill[i:]))
			if r == 0 {
				break
			}
			runes = append(runes, r)
		}
		return string(runes), nil
	}
	return nil, errAt(ErrUnsupported, -1, "a fill value for %s", dt)
}

func floatValue(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

func byteOrder(dt ndarray.DType) binary.ByteOrder {
	if dt.Order == '>' {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// jsonInteger reads a JSON number that is an integer (1, -3, 2.0, 1e3) as
// a big.Int.
func jsonInteger(raw []byte, unsigned bool) (*big.Int, bool) {
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&n) != nil || len(n) > 400 {
		return nil, false
	}
	if v, ok := new(big.Int).SetString(string(n), 10); ok {
		return v, true
	}
	f, ok := new(big.Float).SetString(string(n))
	if !ok || !f.IsInt() {
		return nil, false
	}
	v, _ := f.Int(nil)
	return v, true
}

func fitsInt(v *big.Int, dt ndarray.DType) bool {
	bits := uint(dt.ItemSize * 8)
	if dt.Kind == 'u' {
		return v.Sign() >= 0 && v.BitLen() <= int(bits)
	}
	lo := new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), bits-1))
	hi := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits-1), big.NewInt(1))
	return v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0
}

func putInt(item []byte, v *big.Int, order binary.ByteOrder) {
	u := uint64(v.Int64())
	if v.Sign() >= 0 {
		u = v.Uint64()
	}
	switch len(item) {
	case 1:
		item[0] = byte(u)
	case 2:
		order.PutUint16(item, uint16(u))
	case 4:
		order.PutUint32(item, uint32(u))
	case 8:
		order.PutUint64(item, u)
	}
}

func getInt(item []byte, order binary.ByteOrder) int64 {
	switch len(item) {
	case 1:
		return int64(int8(item[0]))
	case 2:
		return int64(int16(order.Uint16(item)))
	case 4:
		return int64(int32(order.Uint32(item)))
	}
	return int64(order.Uint64(item))
}

func getUint(item []byte, order binary.ByteOrder) uint64 {
	switch len(item) {
	case 1:
		return uint64(item[0])
	case 2:
		return uint64(order.Uint16(item))
	case 4:
		return uint64(order.Uint32(item))
	}
	return order.Uint64(item)
}

// jsonFloat reads a JSON number, or Zarr's "NaN", "Infinity" and
// "-Infinity".
func jsonFloat(raw []byte) (float64, bool) {
	switch string(bytes.TrimSpace(raw)) {
	case `"NaN"`:
		return math.NaN(), true
	case `"Infinity"`:
		return math.Inf(1), true
	case `"-Infinity"`:
		return math.Inf(-1), true
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&n) != nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true // numpy turns a number past a float's range into an infinity
}

// putFloat stores f in item (2, 4 or 8 bytes); a long double (f16), which
// ndpack holds as opaque bytes, takes no fill value.
func putFloat(item []byte, f float64, order binary.ByteOrder) bool {
	switch len(item) {
	case 2:
		order.PutUint16(item, float16.FromFloat64(f))
	case 4:
		order.PutUint32(item, math.Float32bits(float32(f)))
	case 8:
		order.PutUint64(item, math.Float64bits(f))
	default:
		return false
	}
	return true
}

func getFloat(item []byte, order binary.ByteOrder) (float64, bool) {
	switch len(item) {
	case 2:
		return float16.ToFloat64(order.Uint16(item)), true
	case 4:
		return float64(math.Float32frombits(order.Uint32(item))), true
	case 8:
		return math.Float64frombits(order.Uint64(item)), true
	}
	return 0, false
}
