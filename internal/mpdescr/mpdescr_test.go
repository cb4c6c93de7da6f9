package mpdescr

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func record(t testing.TB, fields []ndarray.Field, size int) ndarray.DType {
	dt, err := ndarray.NewRecord(fields, size)
	require.NoError(t, err)
	return dt
}

// sampleDTypes are records of every feature a descr carries.
func sampleDTypes(t testing.TB) []ndarray.DType {
	f8, i2 := ndarray.MustParseDType("<f8"), ndarray.MustParseDType(">i2")
	sub, err := ndarray.NewSubarray(ndarray.MustParseDType("<u2"), []int{2})
	require.NoError(t, err)
	inner := record(t, []ndarray.Field{{Name: "c", DType: i2}, {Name: "d", Title: "the d", DType: ndarray.MustParseDType("|S3"), Offset: 4}}, 8)
	return []ndarray.DType{
		record(t, []ndarray.Field{{Name: "x", DType: f8}, {Name: "y", DType: i2, Offset: 8}}, 0),
		record(t, []ndarray.Field{{Name: "a", DType: inner, Shape: []int{2, 3}}, {Name: "s", DType: sub, Shape: []int{3}, Offset: 48}, {Name: "é", DType: f8, Offset: 64}}, 80),
		record(t, []ndarray.Field{{Name: "", DType: f8}}, 0),
		record(t, []ndarray.Field{{Name: "e", DType: record(t, nil, 8)}}, 0),
		record(t, nil, 0),
		ndarray.MustParseDType("|V8"),
	}
}

func TestRoundTrip(t *testing.T) {
	for _, dt := range sampleDTypes(t) {
		b, err := Append(nil, dt)
		require.NoError(t, err)
		got, n, err := Read(b)
		require.NoError(t, err, "%s", dt)
		assert.Equal(t, len(b), n)
		assert.Equal(t, dt, got, "%s read back as %s", dt, got)
	}
	// A record of padding only holds nothing more than a plain void.
	b, err := Append(nil, record(t, nil, 8))
	require.NoError(t, err)
	got, _, err := Read(b)
	require.NoError(t, err)
	assert.Equal(t, ndarray.MustParseDType("|V8"), got)
}

// hostileDescrs are descrs that cost the decoder most per byte.
func hostileDescrs(n int) map[string][]byte {
	out := map[string][]byte{}
	build := func(name string, count int, entry func(b []byte, i int) []byte) {
		b := mpwire.AppendArrayHeader(nil, count)
		for i := range count {
			b = entry(b, i)
		}
		out[name] = b
	}
	build("bool fields", n, func(b []byte, i int) []byte {
		return mpwire.AppendString(mpwire.AppendString(append(b, 0x92), strconv.Itoa(i)), "|b1")
	})
	build("empty records", n, func(b []byte, i int) []byte {
		return append(mpwire.AppendString(append(b, 0x92), strconv.Itoa(i)), 0x90)
	})
	build("one-field records", n, func(b []byte, i int) []byte {
		return append(mpwire.AppendString(append(b, 0x92), strconv.Itoa(i)), 0x91, 0x92, 0xa1, 'a', 0xa3, '|', 'b', '1')
	})
	build("subarray formats", n, func(b []byte, i int) []byte {
		return append(mpwire.AppendString(append(b, 0x92), strconv.Itoa(i)), 0x92, 0xa3, '|', 'b', '1', 0x01)
	})
	deep := []byte{0x91, 0x92, 0xa1, 'z', 0xa3, '|', 'b', '1'}
	for range ndarray.MaxRecordDepth - 2 {
		deep = append([]byte{0x91, 0x92, 0xa1, 'n'}, deep...)
	}
	build("deep records", n/16, func(b []byte, i int) []byte {
		return append(mpwire.AppendString(append(b, 0x92), strconv.Itoa(i)), deep...)
	})
	out["claimed count"] = []byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0x92, 0xa0, 0x90}
	return out
}

// No descr makes the decoder allocate more than its budget says, whether
// it is accepted or refused at the budget.
func TestReadMemoryBound(t *testing.T) {
	for _, n := range []int{1000, 20000} {
		for name, b := range hostileDescrs(n) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			dt, _, err := Read(b)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s x%d: %d bytes, %d allocated (%.0fx): %d fields, %v", name, n, len(b), alloc, float64(alloc)/float64(len(b)), dt.NumFields(), err)
			assert.LessOrEqual(t, alloc, uint64(MaxExpansion*len(b)+ExpansionSlack), "%s x%d", name, n)
		}
	}
}

func TestReadErrors(t *testing.T) {
	for name, c := range map[string]struct {
		in   string
		want string
	}{
		"not a list":  {"\xa3<i4", "descr is msgpack type byte 0xa3"},
		"truncated":   {"\x92\x92\xa1a\xa3<i4", "needs 1 byte, 0 remain"},
		"object":      {"\x91\x92\xa1o\xa2|O", "object array (pickle)"},
		"long shape":  {"\x91\x93\xa1a\xa3<i4\x91\xff", "negative"},
		"bad title":   {"\x91\x92\x93\xa1t\xa1a\xa1b\xa3<i4", "want [title, name]"},
		"bad format":  {"\x91\x92\xa1a\xc3", "not a typestr, a descr list or a [base, shape] pair"},
		"duplicate":   {"\x92\x92\xa1a\xa3<i4\x92\xa1a\xa3<i4", "already used"},
		"huge subarr": {"\x91\x93\xa1a\xa3<f8\x92\xce\x7f\xff\xff\xff\xce\x7f\xff\xff\xff", "out of range"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := Read([]byte(c.in))
			require.Error(t, err)
			assert.ErrorContains(t, err, c.want)
			e, ok := err.(*Error)
			require.True(t, ok)
			assert.Equal(t, name == "truncated", e.Truncated)
			assert.Equal(t, name == "object", e.Object)
		})
	}
}

func FuzzRead(f *testing.F) {
	for _, dt := range sampleDTypes(f) {
		b, _ := Append(nil, dt)
		f.Add(b)
	}
	for _, b := range hostileDescrs(40) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		dt, n, err := Read(in)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(MaxExpansion*len(in)+ExpansionSlack) {
			t.Fatalf("%d bytes allocated for a %d-byte descr", alloc, len(in))
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error is not an *Error: %v", err)
			}
			return
		}
		if n > len(in) {
			t.Fatalf("read %d of %d bytes", n, len(in))
		}
		if err := dt.Validate(); err != nil {
			t.Fatalf("read an invalid dtype: %v", err)
		}
		out, err := Append(nil, dt)
		if err != nil {
			t.Fatalf("cannot write back the dtype read: %v", err)
		}
		back, m, err := Read(out)
		if err != nil || m != len(out) || back != dt {
			t.Fatalf("%s written back reads as %s (%v)", dt, back, err)
		}
	})
}
