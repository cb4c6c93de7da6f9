package ndarray

import (
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
)

// benchRecords is the record count of the record benchmarks: a million
// 3-field records, 16 MB as numpy packs them.
const benchRecords = 1 << 20

// packedPoints returns a million records of numpy's default (packed)
// np.dtype([('id', 'i4'), ('x', 'f8'), ('y', 'f4')]) in byte order o: 16
// bytes a record, where the Go struct point takes 24.
func packedPoints(b *testing.B, o byte) *Array {
	dt, err := NewRecord([]Field{
		{Name: "id", DType: MustParseDType("<i4").WithOrder(o)},
		{Name: "x", DType: DTypeOf[float64]().WithOrder(o), Offset: 4},
		{Name: "y", DType: DTypeOf[float32]().WithOrder(o), Offset: 12},
	}, 0)
	if err != nil {
		b.Fatal(err)
	}
	a, err := New(dt, []int{benchRecords}, benchbase.Data(benchRecords*dt.ItemSize))
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkRecordsCopyBaseline is copy() of the packed records' 16 MB, the
// baseline the record benchmarks report their x-baseline against.
func BenchmarkRecordsCopyBaseline(b *testing.B) {
	benchbase.Copy(b, packedPoints(b, '<').Data)
}

// versusCopy runs read against copy() of a's bytes: into a buffer made
// once, or, when alloc, into one made for each copy, as a reader that
// returns a new []T must. The x-baseline metric is the ratio the issue
// bounds by 4.
func versusCopy(b *testing.B, a *Array, alloc bool, read func() error) {
	dst := make([]byte, len(a.Data))
	b.SetBytes(int64(len(a.Data)))
	b.ReportAllocs()
	benchbase.Versus(b, func() {
		if err := read(); err != nil {
			b.Fatal(err)
		}
	}, func() {
		if alloc {
			dst = make([]byte, len(a.Data))
			benchbase.Sink = dst
		}
		copy(dst, a.Data)
	})
}

// BenchmarkRecordsOfPacked reads the packed records into a new []point,
// against make and copy() of the same 16 MB: the fields move by the plan,
// two runs a record (id; x and y back to back).
func BenchmarkRecordsOfPacked(b *testing.B) {
	a := packedPoints(b, NativeOrder())
	versusCopy(b, a, true, func() error {
		_, err := RecordsOf[point](a)
		return err
	})
}

// BenchmarkRecordsOfPackedSwapped is BenchmarkRecordsOfPacked with every
// field in the other byte order: the plan swaps as it moves.
func BenchmarkRecordsOfPackedSwapped(b *testing.B) {
	other := byte('>')
	if NativeOrder() == '>' {
		other = '<'
	}
	a := packedPoints(b, other)
	versusCopy(b, a, true, func() error {
		_, err := RecordsOf[point](a)
		return err
	})
}

// BenchmarkCopyRecordsPacked reads the packed records into a []point made
// once, as copy() writes into a buffer made once.
func BenchmarkCopyRecordsPacked(b *testing.B) {
	a := packedPoints(b, NativeOrder())
	dst := make([]point, benchRecords)
	versusCopy(b, a, false, func() error {
		_, err := CopyRecords(dst, a)
		return err
	})
}

// BenchmarkRecordsOfAligned reads records laid out as numpy's align=True
// (Go's own layout): zero-copy. Its baseline is make and copy() of its
// 24 MB.
func BenchmarkRecordsOfAligned(b *testing.B) {
	dt, err := RecordDTypeOf[point]()
	if err != nil {
		b.Fatal(err)
	}
	a, err := New(dt, []int{benchRecords}, aligned(benchbase.Data(benchRecords*dt.ItemSize)))
	if err != nil {
		b.Fatal(err)
	}
	versusCopy(b, a, true, func() error {
		_, err := RecordsOf[point](a)
		return err
	})
}
