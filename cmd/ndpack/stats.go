package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/ndarray"
)

// number is a statistic: exact text (integers keep every digit), shown as
// a JSON number when finite and as "NaN", "+Inf" or "-Inf" otherwise. A nil
// *number is JSON null (no value: an empty array, all NaN).
type number struct {
	s      string
	quoted bool // not a JSON number: non-finite or complex
}

func (n *number) text() string {
	if n == nil {
		return "-"
	}
	return n.s
}

func (n *number) MarshalJSON() ([]byte, error) {
	if n == nil {
		return []byte("null"), nil
	}
	if n.quoted {
		return json.Marshal(n.s)
	}
	return []byte(n.s), nil
}

func floatNumber(f float64) *number {
	switch {
	case math.IsNaN(f):
		return &number{"NaN", true}
	case math.IsInf(f, 1):
		return &number{"+Inf", true}
	case math.IsInf(f, -1):
		return &number{"-Inf", true}
	}
	return &number{s: strconv.FormatFloat(f, 'g', -1, 64)}
}

type stats struct {
	Min  *number `json:"min"`
	Max  *number `json:"max"`
	Mean *number `json:"mean"`
	NaNs int     `json:"nan_count"`
}

// summarize returns the statistics of a numeric array (nil for other
// kinds and for long doubles, which Go cannot hold) and its first n values
// as text.
func summarize(a *ndarray.Array, n int) (*stats, []string) {
	dt := a.DType
	switch {
	case dt.Kind == ndarray.Bool:
		return intStats[bool](a, n, boolInt)
	case dt.Kind == ndarray.Int && dt.ItemSize == 1:
		return intStats[int8](a, n, func(v int8) int64 { return int64(v) })
	case dt.Kind == ndarray.Int && dt.ItemSize == 2:
		return intStats[int16](a, n, func(v int16) int64 { return int64(v) })
	case dt.Kind == ndarray.Int && dt.ItemSize == 4:
		return intStats[int32](a, n, func(v int32) int64 { return int64(v) })
	case dt.Kind == ndarray.Int && dt.ItemSize == 8:
		return intStats[int64](a, n, func(v int64) int64 { return v })
	case dt.Kind == ndarray.Uint && dt.ItemSize == 1:
		return uintStats[uint8](a, n)
	case dt.Kind == ndarray.Uint && dt.ItemSize == 2:
		return uintStats[uint16](a, n)
	case dt.Kind == ndarray.Uint && dt.ItemSize == 4:
		return uintStats[uint32](a, n)
	case dt.Kind == ndarray.Uint && dt.ItemSize == 8:
		return uintStats[uint64](a, n)
	case dt.Kind == ndarray.Float && dt.ItemSize == 2:
		return floatStats(halfValues(a), n)
	case dt.Kind == ndarray.Float && dt.ItemSize == 4:
		v, _ := ndarray.Values[float32](a)
		f := make([]float64, len(v))
		for i, x := range v {
			f[i] = float64(x)
		}
		return floatStats(f, n)
	case dt.Kind == ndarray.Float && dt.ItemSize == 8:
		v, _ := ndarray.Values[float64](a)
		return floatStats(v, n)
	case dt.Kind == ndarray.Complex && dt.ItemSize == 8:
		v, _ := ndarray.Values[complex64](a)
		c := make([]complex128, len(v))
		for i, x := range v {
			c[i] = complex128(x)
		}
		return complexStats(c, n)
	case dt.Kind == ndarray.Complex && dt.ItemSize == 16:
		v, _ := ndarray.Values[complex128](a)
		return complexStats(v, n)
	}
	return nil, firstRaw(a, n)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func intStats[T bool | int8 | int16 | int32 | int64](a *ndarray.Array, n int, conv func(T) int64) (*stats, []string) {
	v, _ := ndarray.Values[T](a)
	first := make([]string, 0, min(n, len(v)))
	for _, x := range v[:min(n, len(v))] {
		first = append(first, fmt.Sprint(x))
	}
	if len(v) == 0 {
		return &stats{}, first
	}
	lo, hi, sum := conv(v[0]), conv(v[0]), 0.0
	for _, x := range v {
		c := conv(x)
		lo, hi, sum = min(lo, c), max(hi, c), sum+float64(c)
	}
	return &stats{Min: &number{s: strconv.FormatInt(lo, 10)}, Max: &number{s: strconv.FormatInt(hi, 10)},
		Mean: floatNumber(sum / float64(len(v)))}, first
}

func uintStats[T uint8 | uint16 | uint32 | uint64](a *ndarray.Array, n int) (*stats, []string) {
	v, _ := ndarray.Values[T](a)
	first := make([]string, 0, min(n, len(v)))
	for _, x := range v[:min(n, len(v))] {
		first = append(first, strconv.FormatUint(uint64(x), 10))
	}
	if len(v) == 0 {
		return &stats{}, first
	}
	lo, hi, sum := v[0], v[0], 0.0
	for _, x := range v {
		lo, hi, sum = min(lo, x), max(hi, x), sum+float64(x)
	}
	return &stats{Min: &number{s: strconv.FormatUint(uint64(lo), 10)}, Max: &number{s: strconv.FormatUint(uint64(hi), 10)},
		Mean: floatNumber(sum / float64(len(v)))}, first
}

func floatStats(v []float64, n int) (*stats, []string) {
	first := make([]string, 0, min(n, len(v)))
	for _, x := range v[:min(n, len(v))] {
		first = append(first, floatNumber(x).s)
	}
	s := &stats{}
	lo, hi, sum, count := math.Inf(1), math.Inf(-1), 0.0, 0
	for _, x := range v {
		if math.IsNaN(x) {
			s.NaNs++
			continue
		}
		lo, hi, sum, count = math.Min(lo, x), math.Max(hi, x), sum+x, count+1
	}
	if count > 0 {
		s.Min, s.Max, s.Mean = floatNumber(lo), floatNumber(hi), floatNumber(sum/float64(count))
	}
	return s, first
}

func complexStats(v []complex128, n int) (*stats, []string) {
	first := make([]string, 0, min(n, len(v)))
	for _, x := range v[:min(n, len(v))] {
		first = append(first, strconv.FormatComplex(x, 'g', -1, 128))
	}
	s := &stats{}
	var sum complex128
	count := 0
	for _, x := range v {
		if math.IsNaN(real(x)) || math.IsNaN(imag(x)) {
			s.NaNs++
			continue
		}
		sum += x
		count++
	}
	if count > 0 {
		s.Mean = &number{strconv.FormatComplex(sum/complex(float64(count), 0), 'g', -1, 128), true}
	}
	return s, first
}

// halfValues decodes IEEE 754 binary16 elements exactly into float64.
func halfValues(a *ndarray.Array) []float64 {
	order := binary.ByteOrder(binary.LittleEndian)
	if a.DType.Order == ndarray.BigEndian {
		order = binary.BigEndian
	}
	out := make([]float64, a.Len())
	for i := range out {
		h := order.Uint16(a.Data[2*i:])
		sign := 1.0
		if h&0x8000 != 0 {
			sign = -1
		}
		exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
		switch exp {
		case 0:
			out[i] = sign * math.Ldexp(frac, -24)
		case 0x1f:
			if frac != 0 {
				out[i] = math.NaN()
			} else {
				out[i] = sign * math.Inf(1)
			}
		default:
			out[i] = sign * math.Ldexp(1024+frac, exp-25)
		}
	}
	return out
}

// firstRaw shows elements of the kinds without statistics.
func firstRaw(a *ndarray.Array, n int) []string {
	dt := a.DType
	var out []string
	for i := 0; i < min(n, a.Len()); i++ {
		item := a.Data[i*dt.ItemSize : (i+1)*dt.ItemSize]
		switch dt.Kind {
		case ndarray.Bytes:
			out = append(out, strconv.Quote(strings.TrimRight(string(item), "\x00")))
		case ndarray.Unicode:
			out = append(out, strconv.Quote(ucs4(item, dt.Order)))
		case ndarray.Datetime, ndarray.Timedelta:
			order := binary.ByteOrder(binary.LittleEndian)
			if dt.Order == ndarray.BigEndian {
				order = binary.BigEndian
			}
			v := int64(order.Uint64(item))
			if v == math.MinInt64 {
				out = append(out, "NaT")
			} else {
				out = append(out, strconv.FormatInt(v, 10)+unitSuffix(dt.Unit))
			}
		default:
			out = append(out, fmt.Sprintf("0x%x", item))
		}
	}
	return out
}

func unitSuffix(u string) string {
	if u == "" {
		return ""
	}
	return "[" + u + "]"
}

func ucs4(b []byte, o ndarray.ByteOrder) string {
	order := binary.ByteOrder(binary.LittleEndian)
	if o == ndarray.BigEndian {
		order = binary.BigEndian
	}
	var s strings.Builder
	for i := 0; i+4 <= len(b); i += 4 {
		r := rune(order.Uint32(b[i:]))
		if r == 0 {
			break
		}
		if !utf8.ValidRune(r) {
			r = utf8.RuneError
		}
		s.WriteRune(r)
	}
	return s.String()
}
