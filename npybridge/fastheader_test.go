package npybridge

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// canonicalCases are headers np.save writes, and near misses that only the
// general parser may judge.
var canonicalCases = []string{
	"{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }",
	"{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
	"{'descr': '>c16', 'fortran_order': False, 'shape': (), }",
	"{'descr': '|b1', 'fortran_order': False, 'shape': (0, 4, 1), }",
	"{'descr': '<i8', 'fortran_order': False, 'shape': (9223372036854775807, 2), }",
	"{'descr': '<i8', 'fortran_order': False, 'shape': (010,), }",
	"{'descr': '<i8', 'fortran_order': False, 'shape': (1 ,), }",
	"{'descr': '<i8', 'fortran_order': False, 'shape': (1, ), }",
	"{'descr': '<i8', 'fortran_order': False, 'shape': (1,2), }",
	"{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2,), }",
	"{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (3,), }",
	"{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (3,), }",
	"{'descr': '<f8', 'fortran_order': 0, 'shape': (10,), }",
	"{'descr': '<f8', 'shape': (10,), 'fortran_order': False, }",
	"{'descr': '<f8', 'fortran_order': False, 'shape': (10,), 'x': 1}",
	"{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }",
}

// The fast path for np.save's headers agrees with the general parser on
// every header it takes, and leaves the others to it.
func TestCanonicalHeaderAgrees(t *testing.T) {
	for _, c := range canonicalCases {
		checkCanonical(t, padHeader(c))
	}
	taken := 0
	for _, c := range canonicalCases[:4] {
		var h Header
		if h.parseCanonical(padHeader(c)) {
			taken++
		}
	}
	if taken != 4 {
		t.Errorf("the fast path took %d of np.save's 4 headers", taken)
	}
}

func padHeader(s string) []byte {
	n := 10 + len(s) + 1
	return []byte(s + string(bytes.Repeat([]byte{' '}, (64-n%64)%64)) + "\n")
}

func checkCanonical(t *testing.T, text []byte) {
	var fast Header
	if !fast.parseCanonical(text) {
		return
	}
	general := Header{Major: 1}
	if err := general.parse(append([]byte(nil), text...), false, false); err != nil {
		t.Fatalf("fast path took %q, the general parser refuses it: %v", text, err)
	}
	if fast.DType != general.DType || fast.FortranOrder != general.FortranOrder || !reflect.DeepEqual(fast.Shape, general.Shape) {
		t.Fatalf("%q: fast %v %v %v, general %v %v %v", text, fast.DType, fast.FortranOrder, fast.Shape, general.DType, general.FortranOrder, general.Shape)
	}
}

func FuzzCanonicalHeader(f *testing.F) {
	for _, c := range canonicalCases {
		f.Add(padHeader(c))
	}
	f.Fuzz(func(t *testing.T, text []byte) { checkCanonical(t, text) })
}

// readSmall returns a function that reads a 10-element .npy from memory,
// as many small files are read, failing tb on an error.
func readSmall(tb testing.TB) func() {
	a, _ := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		tb.Fatal(err)
	}
	r := bytes.NewReader(buf.Bytes())
	return func() {
		r.Reset(buf.Bytes())
		if _, err := (ReadOptions{}).Read(r); err != nil {
			tb.Fatal(err)
		}
	}
}

// A small .npy reads in few allocations: the header, its shape, the data
// and the array (a tree of Python values and 34 allocations before).
func TestSmallReadAllocations(t *testing.T) {
	if n := testing.AllocsPerRun(200, readSmall(t)); n > 5 {
		t.Errorf("%v allocations to read a 10-element .npy, want at most 5", n)
	}
}

// BenchmarkReadSmall reads a 10-element .npy from memory: the header
// parse dominates (the goal: under 1 us and under 6 allocations).
func BenchmarkReadSmall(b *testing.B) {
	read := readSmall(b)
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
}
