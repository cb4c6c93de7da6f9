package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/ndpack/ndpack/internal/float16"
	"github.com/ndpack/ndpack/ndarray"
)

// number is a statistic or a value: exact text (integers keep every digit),
// and its JSON form: a number when finite, "NaN", "+Inf" or "-Inf"
// otherwise, or whatever JSON suits the value (true, "2024-01-01", [re,
// im]). A nil *number is JSON null (no value: an empty array, all NaN).
type number struct {
	s    string
	json string // the JSON text; "" means s is a JSON number as it is
}

func (n *number) text() string {
	if n == nil {
		return "-"
	}
	return n.s
}

func (n *number) MarshalJSON() ([]byte, error) {
	switch {
	case n == nil:
		return []byte("null"), nil
	case n.json != "":
		return []byte(n.json), nil
	}
	return []byte(n.s), nil
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func intNumber(v int64) *number   { return &number{s: strconv.FormatInt(v, 10)} }
func uintNumber(v uint64) *number { return &number{s: strconv.FormatUint(v, 10)} }

// floatNumber prints f in the shortest form that reads back as the same
// value of the given width in bits (16, 32 or 64), as NumPy prints.
func floatNumber(f float64, bits int) *number {
	switch {
	case math.IsNaN(f):
		return &number{"NaN", `"NaN"`}
	case math.IsInf(f, 1):
		return &number{"+Inf", `"+Inf"`}
	case math.IsInf(f, -1):
		return &number{"-Inf", `"-Inf"`}
	case bits == 16:
		// strconv knows no float16: the fewest digits that round back.
		want := float16.FromFloat64(f)
		for prec := 1; prec < 17; prec++ {
			s := strconv.FormatFloat(f, 'g', prec, 64)
			if g, _ := strconv.ParseFloat(s, 64); float16.FromFloat64(g) == want {
				return &number{s: s}
			}
		}
	}
	return &number{s: strconv.FormatFloat(f, 'g', -1, bits)}
}

func complexNumber(c complex128, bits int) *number {
	re, im := floatNumber(real(c), bits), floatNumber(imag(c), bits)
	sign := "+"
	if strings.HasPrefix(im.s, "-") || strings.HasPrefix(im.s, "+") {
		sign = ""
	}
	j := func(n *number) string { b, _ := n.MarshalJSON(); return string(b) }
	return &number{s: "(" + re.s + sign + im.s + "j)", json: "[" + j(re) + "," + j(im) + "]"}
}

// stats are the statistics of one array. Which fields are set depends on
// the kind: numbers have min, max, mean; floats and complex also count
// NaNs and give the mean without them; bools count True and False;
// datetimes and timedeltas have min and max and count NaT.
type stats struct {
	Min     *number `json:"min,omitempty"`
	Max     *number `json:"max,omitempty"`
	Mean    *number `json:"mean,omitempty"`
	NaNMean *number `json:"nanmean,omitempty"`
	NaNs    *int64  `json:"nan_count,omitempty"`
	NaTs    *int64  `json:"nat_count,omitempty"`
	True    *int64  `json:"true_count,omitempty"`
	False   *int64  `json:"false_count,omitempty"`
}

// accumulator gathers an array's statistics from its data, a chunk of whole
// elements at a time, in memory that does not grow with the array.
type accumulator struct {
	dt      ndarray.DType
	swap    bool   // the data is not in the machine's byte order
	scratch []byte // for swapped chunks

	n, nans   int64
	trues     int64
	seen      bool // a value other than NaN or NaT
	iMin      int64
	iMax      int64
	uMin      uint64
	uMax      uint64
	fMin      float64
	fMax      float64
	sum       float64
	csum      complex128
	hasStats  bool
	isComplex bool
}

func newAccumulator(dt ndarray.DType) *accumulator {
	a := &accumulator{dt: dt, swap: dt.WithOrder(ndarray.NativeOrder()) != dt}
	switch dt.Kind {
	case 'b', 'i', 'u', 'M', 'm':
		a.hasStats = true
	case 'f':
		a.hasStats = dt.ItemSize <= 8
	case 'c':
		a.hasStats, a.isComplex = dt.ItemSize <= 16, true
	}
	a.fMin, a.fMax = math.Inf(1), math.Inf(-1)
	a.iMin, a.iMax = math.MaxInt64, math.MinInt64
	a.uMin = math.MaxUint64
	return a
}

// native returns chunk in the machine's byte order, swapped into scratch
// if need be.
func (a *accumulator) native(chunk []byte) []byte {
	if !a.swap {
		return chunk
	}
	if cap(a.scratch) < len(chunk) {
		a.scratch = make([]byte, len(chunk))
	}
	s := a.scratch[:len(chunk)]
	copy(s, chunk)
	ndarray.SwapBytes(s, a.dt)
	return s
}

// as views b, whose length is a multiple of T's size and whose start is
// aligned for T (chunks start at the beginning of a large allocation, or at
// a multiple of the item size from it), as a []T.
func as[T any](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b) < size {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
}

func (a *accumulator) add(chunk []byte) {
	if !a.hasStats || len(chunk) == 0 {
		return
	}
	b := a.native(chunk)
	switch k, size := a.dt.Kind, a.dt.ItemSize; {
	case k == 'b':
		for _, x := range b {
			if x != 0 {
				a.trues++
			}
		}
		a.n += int64(len(b))
	case k == 'i' && size == 1:
		addSigned(a, as[int8](b))
	case k == 'i' && size == 2:
		addSigned(a, as[int16](b))
	case k == 'i' && size == 4:
		addSigned(a, as[int32](b))
	case k == 'i' && size == 8:
		addSigned(a, as[int64](b))
	case k == 'u' && size == 1:
		addUnsigned(a, as[uint8](b))
	case k == 'u' && size == 2:
		addUnsigned(a, as[uint16](b))
	case k == 'u' && size == 4:
		addUnsigned(a, as[uint32](b))
	case k == 'u' && size == 8:
		addUnsigned(a, as[uint64](b))
	case k == 'f' && size == 2:
		for _, h := range as[uint16](b) {
			a.addFloat(float16.ToFloat64(h))
		}
	case k == 'f' && size == 4:
		addFloats(a, as[float32](b))
	case k == 'f' && size == 8:
		addFloats(a, as[float64](b))
	case k == 'c' && size == 8:
		for _, c := range as[complex64](b) {
			a.addComplex(complex128(c))
		}
	case k == 'c' && size == 16:
		for _, c := range as[complex128](b) {
			a.addComplex(c)
		}
	case k == 'M' || k == 'm':
		for _, v := range as[int64](b) {
			a.n++
			if v == math.MinInt64 { // NaT
				a.nans++
				continue
			}
			a.seen = true
			a.iMin, a.iMax = min(a.iMin, v), max(a.iMax, v)
		}
	}
}

func addSigned[T int8 | int16 | int32 | int64](a *accumulator, v []T) {
	lo, hi, sum := a.iMin, a.iMax, 0.0
	for _, x := range v {
		c := int64(x)
		lo, hi = min(lo, c), max(hi, c)
		sum += float64(c)
	}
	a.iMin, a.iMax, a.sum, a.n = lo, hi, a.sum+sum, a.n+int64(len(v))
	a.seen = a.seen || len(v) > 0
}

func addUnsigned[T uint8 | uint16 | uint32 | uint64](a *accumulator, v []T) {
	lo, hi, sum := a.uMin, a.uMax, 0.0
	for _, x := range v {
		c := uint64(x)
		lo, hi = min(lo, c), max(hi, c)
		sum += float64(c)
	}
	a.uMin, a.uMax, a.sum, a.n = lo, hi, a.sum+sum, a.n+int64(len(v))
	a.seen = a.seen || len(v) > 0
}

// addFloats sums a chunk on its own before adding it to the total, which
// keeps rounding error near NumPy's pairwise summation for large arrays.
func addFloats[T float32 | float64](a *accumulator, v []T) {
	lo, hi, sum := a.fMin, a.fMax, 0.0
	var nans int64
	for _, x := range v {
		f := float64(x)
		if f != f {
			nans++
			continue
		}
		if f < lo {
			lo = f
		}
		if f > hi {
			hi = f
		}
		sum += f
	}
	a.fMin, a.fMax, a.sum, a.n, a.nans = lo, hi, a.sum+sum, a.n+int64(len(v)), a.nans+nans
	a.seen = a.seen || int64(len(v)) > nans
}

func (a *accumulator) addFloat(f float64) {
	a.n++
	if math.IsNaN(f) {
		a.nans++
		return
	}
	a.seen = true
	a.fMin, a.fMax, a.sum = math.Min(a.fMin, f), math.Max(a.fMax, f), a.sum+f
}

func (a *accumulator) addComplex(c complex128) {
	a.n++
	if math.IsNaN(real(c)) || math.IsNaN(imag(c)) {
		a.nans++
		return
	}
	a.seen = true
	a.csum += c
}

// result returns the statistics, or nil for kinds that have none (strings,
// raw records, and long doubles, which Go cannot compute in).
func (a *accumulator) result() *stats {
	if !a.hasStats {
		return nil
	}
	count := func(v int64) *int64 { return &v }
	s := &stats{}
	bits := 64
	switch {
	case a.dt.Kind == 'f' && a.dt.ItemSize == 2:
		bits = 16
	case a.dt.ItemSize == 4 || (a.isComplex && a.dt.ItemSize == 8):
		bits = 32
	}
	switch a.dt.Kind {
	case 'b':
		s.True, s.False = count(a.trues), count(a.n-a.trues)
	case 'i':
		if a.seen {
			s.Min, s.Max, s.Mean = intNumber(a.iMin), intNumber(a.iMax), floatNumber(a.sum/float64(a.n), 64)
		}
	case 'u':
		if a.seen {
			s.Min, s.Max, s.Mean = uintNumber(a.uMin), uintNumber(a.uMax), floatNumber(a.sum/float64(a.n), 64)
		}
	case 'f':
		s.NaNs = count(a.nans)
		if a.seen {
			s.Min, s.Max = floatNumber(a.fMin, bits), floatNumber(a.fMax, bits)
			s.NaNMean = floatNumber(a.sum/float64(a.n-a.nans), 64)
			s.Mean = s.NaNMean
			if a.nans > 0 {
				s.Mean = floatNumber(math.NaN(), 64) // as np.mean: NaN in, NaN out
			}
		}
	case 'c':
		s.NaNs = count(a.nans)
		if a.seen {
			s.NaNMean = complexNumber(a.csum/complex(float64(a.n-a.nans), 0), 64)
			s.Mean = s.NaNMean
			if a.nans > 0 {
				s.Mean = complexNumber(complex(math.NaN(), math.NaN()), 64)
			}
		}
	case 'M', 'm':
		s.NaTs = count(a.nans)
		if a.seen {
			s.Min, s.Max = timeNumber(a.iMin, a.dt), timeNumber(a.iMax, a.dt)
		}
	}
	return s
}

// firstCapture keeps the first elements of an array in row-major order
// while its data streams by in file order, which for a Fortran-order array
// is column-major.
type firstCapture struct {
	itemSize int
	want     map[int64]int // file index of an element -> its row-major rank
	items    [][]byte      // by row-major rank
	maxIndex int64
}

func newFirstCapture(dt ndarray.DType, shape []int, fortran bool, n int) *firstCapture {
	total, _ := ndarray.NumElements(shape)
	n = min(n, total)
	c := &firstCapture{itemSize: dt.ItemSize, want: map[int64]int{}, items: make([][]byte, n), maxIndex: -1}
	for rank := 0; rank < n; rank++ {
		idx := int64(rank)
		if fortran {
			idx = columnMajorIndex(rank, shape)
		}
		c.want[idx] = rank
		c.maxIndex = max(c.maxIndex, idx)
	}
	return c
}

// columnMajorIndex returns where the element of row-major rank lies in the
// column-major order of shape.
func columnMajorIndex(rank int, shape []int) int64 {
	var idx, stride int64 = 0, 1
	coords := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		coords[k] = rank % shape[k]
		rank /= shape[k]
	}
	for k := 0; k < len(shape); k++ {
		idx += int64(coords[k]) * stride
		stride *= int64(shape[k])
	}
	return idx
}

// add looks at the elements of chunk, which starts at element index first.
func (c *firstCapture) add(chunk []byte, first int64) {
	if c.itemSize == 0 || first > c.maxIndex {
		return
	}
	n := int64(len(chunk) / c.itemSize)
	for idx, rank := range c.want {
		if idx >= first && idx < first+n {
			off := (idx - first) * int64(c.itemSize)
			c.items[rank] = append([]byte{}, chunk[off:off+int64(c.itemSize)]...)
		}
	}
}

// values formats the captured elements.
func (c *firstCapture) values(dt ndarray.DType) []*number {
	out := make([]*number, 0, len(c.items))
	for _, item := range c.items {
		if item == nil && c.itemSize > 0 {
			break
		}
		out = append(out, formatItem(dt, item))
	}
	return out
}

// formatItem formats one element as inspect shows it.
func formatItem(dt ndarray.DType, item []byte) *number {
	var order binary.ByteOrder = binary.LittleEndian
	if dt.Order == '>' {
		order = binary.BigEndian
	}
	uint := func(b []byte) uint64 {
		switch len(b) {
		case 1:
			return uint64(b[0])
		case 2:
			return uint64(order.Uint16(b))
		case 4:
			return uint64(order.Uint32(b))
		}
		return order.Uint64(b)
	}
	float := func(b []byte) (float64, int) {
		switch len(b) {
		case 2:
			return float16.ToFloat64(order.Uint16(b)), 16
		case 4:
			return float64(math.Float32frombits(order.Uint32(b))), 32
		}
		return math.Float64frombits(order.Uint64(b)), 64
	}
	switch k, size := dt.Kind, dt.ItemSize; {
	case k == 'b':
		if item[0] != 0 {
			return &number{"True", "true"}
		}
		return &number{"False", "false"}
	case k == 'i':
		shift := 64 - 8*size
		return intNumber(int64(uint(item)<<shift) >> shift)
	case k == 'u':
		return uintNumber(uint(item))
	case k == 'f' && size <= 8:
		f, bits := float(item)
		return floatNumber(f, bits)
	case k == 'c' && size <= 16:
		re, bits := float(item[:size/2])
		im, _ := float(item[size/2:])
		return complexNumber(complex(re, im), bits)
	case k == 'S':
		s := strconv.Quote(strings.TrimRight(string(item), "\x00"))
		return &number{s, jsonString(strings.TrimRight(string(item), "\x00"))}
	case k == 'U':
		u := ucs4(item, order)
		return &number{strconv.Quote(u), jsonString(u)}
	case k == 'M' || k == 'm':
		return timeNumber(int64(order.Uint64(item)), dt)
	}
	h := fmt.Sprintf("0x%x", item) // raw records, long doubles
	return &number{h, jsonString(h)}
}

func ucs4(b []byte, order binary.ByteOrder) string {
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

// timeNumber formats a datetime64 as numpy's str of the scalar (ISO 8601
// to the precision of its unit: "2024-01-05", "2024-01-05T10:30:00.250")
// or a timedelta64 likewise ("90 seconds"); NaT as "NaT".
func timeNumber(v int64, dt ndarray.DType) *number {
	if v == nat {
		return &number{"NaT", `"NaT"`}
	}
	if dt.Kind == 'm' {
		s := timedeltaString(v, dt.Unit)
		return &number{s, jsonString(s)}
	}
	s, ok := datetimeString(v, dt.Unit)
	if !ok {
		s = strconv.FormatInt(v, 10) + " (generic datetime64)"
	}
	return &number{s, jsonString(s)}
}
