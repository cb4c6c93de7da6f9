package ndarray

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustRecord(t testing.TB, fields []Field, itemSize int) DType {
	t.Helper()
	dt, err := NewRecord(fields, itemSize)
	require.NoError(t, err)
	return dt
}

func xy() []Field {
	return []Field{
		{Name: "x", DType: MustParseDType("<f4")},
		{Name: "y", DType: MustParseDType("<i8"), Offset: 4},
	}
}

// The expected strings are numpy 1.24's str(np.dtype(...)) of the same
// layouts; npybridge's interop test checks String against numpy for every
// generated case.
func TestRecordString(t *testing.T) {
	pos, err := NewSubarray(MustParseDType("<i4"), []int{2})
	require.NoError(t, err)
	inner := mustRecord(t, []Field{{Name: "x", DType: MustParseDType("<f2")}}, 0)
	cases := []struct {
		fields []Field
		size   int
		want   string
	}{
		{xy(), 0, "[('x', '<f4'), ('y', '<i8')]"},
		{xy(), 16, "{'names': ['x', 'y'], 'formats': ['<f4', '<i8'], 'offsets': [0, 4], 'itemsize': 16}"},
		{[]Field{
			{Name: "a", DType: MustParseDType("|b1")},
			{Name: "b", DType: MustParseDType("|S0"), Offset: 1},
			{Name: "c", DType: MustParseDType("<U0"), Offset: 1},
			{Name: "d", DType: MustParseDType("|V0"), Offset: 1},
			{Name: "e", DType: MustParseDType("<M8"), Offset: 1},
			{Name: "f", DType: MustParseDType(">m8[10s]"), Offset: 9},
			{Name: "g", DType: MustParseDType("|u1"), Offset: 17},
			{Name: "h", DType: MustParseDType(">c16"), Offset: 18},
			{Name: "i", DType: inner, Shape: []int{2, 1}, Offset: 34},
			{Name: "j", DType: pos, Shape: []int{3}, Offset: 38},
		}, 0, "[('a', '?'), ('b', 'S'), ('c', '<U'), ('d', 'V'), ('e', '<M8'), ('f', '>m8[10s]'), ('g', 'u1'), ('h', '>c16'), ('i', [('x', '<f2')], (2, 1)), ('j', ('<i4', (2,)), (3,))]"},
		{[]Field{{Name: "a", Title: "T", DType: MustParseDType("<i4")}}, 0, "[(('T', 'a'), '<i4')]"},
		{[]Field{{Name: "a", Title: "T", DType: MustParseDType("<i4"), Offset: 4}, {Name: "b", DType: MustParseDType("|S3")}}, 0,
			"{'names': ['a', 'b'], 'formats': ['<i4', 'S3'], 'offsets': [4, 0], 'titles': ['T', None], 'itemsize': 8}"},
		{[]Field{{Name: "it's", DType: DTypeOf[uint8]()}, {Name: `a"b'`, DType: DTypeOf[uint8](), Offset: 1}, {Name: "\\\n\x00\u00a0é\u2028", DType: DTypeOf[uint8](), Offset: 2}}, 0,
			`[("it's", 'u1'), ('a"b\'', 'u1'), ('\\\n\x00\xa0é\u2028', 'u1')]`},
		{nil, 0, "[]"},
		{[]Field{{Name: "p", DType: MustParseDType("<f4"), Shape: []int{3}}}, 0, "[('p', '<f4', (3,))]"},
		{[]Field{{Name: "p", DType: MustParseDType("<f4"), Shape: []int{3}, Offset: 4}}, 0,
			"{'names': ['p'], 'formats': [('<f4', (3,))], 'offsets': [4], 'itemsize': 16}"},
	}
	for _, c := range cases {
		dt := mustRecord(t, c.fields, c.size)
		assert.Equal(t, c.want, dt.String())
		assert.True(t, dt.IsRecord())
		assert.False(t, dt.IsPlain())
		assert.NoError(t, dt.Validate())
	}
	assert.Equal(t, "('<i4', (2,))", pos.String())
	assert.True(t, pos.IsSubarray())
	assert.False(t, pos.IsRecord())
}

func TestRecordEqualityAndCopies(t *testing.T) {
	a := mustRecord(t, xy(), 0)
	b := mustRecord(t, xy(), 0)
	assert.True(t, a == b, "the same layout built twice is ==")
	assert.Equal(t, 12, a.ItemSize)
	assert.NotEqual(t, a, mustRecord(t, xy(), 16), "item size is part of the dtype")
	assert.NotEqual(t, a, DType{Order: '|', Kind: 'V', ItemSize: 12}, "a record is not a plain |V12")
	other := xy()
	other[1].Name = "z"
	assert.NotEqual(t, a, mustRecord(t, other, 0))
	titled := xy()
	titled[0].Title = "X"
	assert.NotEqual(t, a, mustRecord(t, titled, 0))

	// Nested records compare by content.
	n1 := mustRecord(t, []Field{{Name: "p", DType: a, Shape: []int{2}}}, 0)
	n2 := mustRecord(t, []Field{{Name: "p", DType: b, Shape: []int{2}}}, 0)
	assert.True(t, n1 == n2)
	assert.NotEqual(t, n1, mustRecord(t, []Field{{Name: "p", DType: a, Shape: []int{1, 2}}}, 0))
	assert.NotEqual(t, n1, mustRecord(t, []Field{{Name: "p", DType: a}}, 0))

	// Fields is a copy: changing it changes nothing.
	fs := n1.Fields()
	fs[0].Shape[0] = 7
	fs[0].Name = "q"
	assert.Equal(t, []int{2}, n1.Fields()[0].Shape)
	f, ok := n1.FieldByName("p")
	require.True(t, ok)
	assert.Equal(t, 24, f.Size())
	f, ok = mustRecord(t, titled, 0).FieldByName("X")
	assert.True(t, ok, "a title finds its field")
	assert.Equal(t, "x", f.Name)
	_, ok = a.FieldByName("nope")
	assert.False(t, ok)
	_, ok = DTypeOf[float64]().FieldByName("x")
	assert.False(t, ok)
	assert.Nil(t, DTypeOf[float64]().Fields())
}

func TestNewRecordRefuses(t *testing.T) {
	i4 := MustParseDType("<i4")
	cases := []struct {
		fields []Field
		size   int
		want   string
	}{
		{[]Field{{Name: "a", DType: i4}, {Name: "a", DType: i4, Offset: 4}}, 0, "name already used as a name or title"},
		{[]Field{{Name: "a", Title: "t", DType: i4}, {Name: "b", Title: "t", DType: i4, Offset: 4}}, 0, "title \"t\" already used"},
		{[]Field{{Name: "a", Title: "a", DType: i4}}, 0, "title \"a\" already used"},
		{[]Field{{Name: "a", Title: "b", DType: i4}, {Name: "b", DType: i4}}, 0, "name already used"},
		{[]Field{{Name: "a", DType: i4}}, 2, "the fields need 4 bytes, more than the item size 2"},
		{[]Field{{Name: "a", DType: i4, Offset: -1}}, 0, "offset -1"},
		{[]Field{{Name: "a", DType: i4, Shape: []int{-1}}}, 0, "negative"},
		{[]Field{{Name: "a", DType: DType{}}}, 0, "zero DType"},
		{[]Field{{Name: "a\xff", DType: i4}}, 0, "not valid UTF-8"},
		{[]Field{{Name: "a", DType: i4, Shape: []int{1 << 30, 1 << 30}}}, 0, "out of range"},
		{nil, -1, "item size -1"},
	}
	for _, c := range cases {
		_, err := NewRecord(c.fields, c.size)
		require.Error(t, err, c.want)
		assert.True(t, errors.Is(err, ErrDType))
		assert.Contains(t, err.Error(), c.want)
	}

	// Depth: each nested record adds a level.
	dt := i4
	var err error
	for depth := 1; depth <= MaxRecordDepth; depth++ {
		dt, err = NewRecord([]Field{{Name: "a", DType: dt}}, 0)
		require.NoError(t, err, depth)
	}
	_, err = NewRecord([]Field{{Name: "a", DType: dt}}, 0)
	require.ErrorIs(t, err, ErrDType)
	assert.Contains(t, err.Error(), "MaxRecordDepth")

	// Fields over every level: a record of two copies of a record of two
	// ... doubles at each level.
	dt = i4
	for level := 0; ; level++ {
		dt, err = NewRecord([]Field{{Name: "a", DType: dt}, {Name: "b", DType: dt, Offset: dt.ItemSize}}, 0)
		if err != nil {
			assert.Contains(t, err.Error(), "MaxRecordFields")
			assert.Equal(t, 15, level)
			break
		}
	}
}

func TestRecordOverlapAndDescr(t *testing.T) {
	i4 := MustParseDType("<i4")
	over := mustRecord(t, []Field{{Name: "a", DType: i4}, {Name: "b", DType: i4}}, 0)
	assert.Equal(t, "{'names': ['a', 'b'], 'formats': ['<i4', '<i4'], 'offsets': [0, 0], 'itemsize': 4}", over.String())
	_, err := over.Descr()
	require.ErrorIs(t, err, ErrDType)
	assert.Contains(t, err.Error(), "dtype.descr is not defined for types with overlapping or out-of-order fields")
	_, err = mustRecord(t, []Field{{Name: "a", DType: i4, Offset: 4}, {Name: "b", DType: i4}}, 0).Descr()
	require.Error(t, err)

	// numpy: np.dtype([('a','i1'),('b','<f8'),('c','<i2')], align=True).descr
	aligned := mustRecord(t, []Field{{Name: "a", DType: MustParseDType("|i1")}, {Name: "b", DType: MustParseDType("<f8"), Offset: 8},
		{Name: "c", DType: MustParseDType("<i2"), Offset: 16}}, 24)
	items, err := aligned.Descr()
	require.NoError(t, err)
	v := func(n int) DType { return DType{Order: '|', Kind: 'V', ItemSize: n} }
	assert.Equal(t, []DescrItem{{Name: "a", DType: MustParseDType("|i1")}, {DType: v(7)}, {Name: "b", DType: MustParseDType("<f8")},
		{Name: "c", DType: MustParseDType("<i2")}, {DType: v(6)}}, items)
	assert.True(t, items[1].IsPadding())
	assert.False(t, items[0].IsPadding())
	back, err := RecordFromDescr(items)
	require.NoError(t, err)
	assert.True(t, back == aligned)

	// Plain dtypes describe themselves as numpy's one unnamed entry.
	items, err = DTypeOf[float64]().Descr()
	require.NoError(t, err)
	assert.Equal(t, []DescrItem{{DType: DTypeOf[float64]()}}, items)

	// A padding entry with a shape, or a subarray dtype, advances by its
	// whole size; an unnamed field that is not void is a field.
	sub, _ := NewSubarray(i4, []int{2})
	back, err = RecordFromDescr([]DescrItem{{DType: v(1), Shape: []int{4}}, {DType: sub}, {Name: "a", DType: DTypeOf[uint8]()}, {DType: i4}})
	require.NoError(t, err)
	assert.Equal(t, "{'names': ['a', ''], 'formats': ['u1', '<i4'], 'offsets': [12, 13], 'itemsize': 17}", back.String())
	_, err = RecordFromDescr([]DescrItem{{Name: "a", DType: i4}, {Name: "a", DType: i4}})
	assert.ErrorIs(t, err, ErrDType)

	// A subarray field given as a subarray dtype is the same field as one
	// given with a shape, as numpy makes ('a', ('<i4', (2,))).
	assert.True(t, mustRecord(t, []Field{{Name: "a", DType: sub}}, 0) == mustRecord(t, []Field{{Name: "a", DType: i4, Shape: []int{2}}}, 0))
	same, err := NewSubarray(i4, nil)
	require.NoError(t, err)
	assert.Equal(t, i4, same)
}

func TestRecordByteOrder(t *testing.T) {
	inner := mustRecord(t, []Field{{Name: "s", DType: MustParseDType(">i2")}, {Name: "b", DType: MustParseDType("|S2"), Offset: 2}}, 0)
	dt := mustRecord(t, []Field{
		{Name: "a", DType: MustParseDType(">f8")},
		{Name: "b", DType: MustParseDType("<i4"), Offset: 8},
		{Name: "c", DType: inner, Shape: []int{2}, Offset: 12},
		{Name: "u", DType: MustParseDType(">u1"), Offset: 20},
	}, 24)
	assert.Equal(t, "{'names': ['a', 'b', 'c', 'u'], 'formats': ['>f8', '<i4', ([('s', '>i2'), ('b', 'S2')], (2,)), 'u1'], 'offsets': [0, 8, 12, 20], 'itemsize': 24}", dt.String())
	little := dt.WithOrder('<')
	assert.Equal(t, "{'names': ['a', 'b', 'c', 'u'], 'formats': ['<f8', '<i4', ([('s', '<i2'), ('b', 'S2')], (2,)), 'u1'], 'offsets': [0, 8, 12, 20], 'itemsize': 24}", little.String())
	assert.True(t, little.WithOrder('<') == little)

	rec := []byte{
		1, 2, 3, 4, 5, 6, 7, 8, // a >f8
		9, 10, 11, 12, // b <i4, already little
		13, 14, 'x', 'y', 15, 16, 'z', 'w', // c: two (>i2, S2)
		17, 0xaa, 0xbb, 0xcc, // u and padding
	}
	data := append(append([]byte{}, rec...), rec...)
	a, err := New(dt, []int{2}, data)
	require.NoError(t, err)
	l, err := a.ToOrder('<')
	require.NoError(t, err)
	assert.Equal(t, little, l.DType)
	want := []byte{8, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 14, 13, 'x', 'y', 16, 15, 'z', 'w', 17, 0xaa, 0xbb, 0xcc}
	assert.Equal(t, append(append([]byte{}, want...), want...), l.Data)
	assert.Equal(t, rec, a.Data[:24], "ToOrder does not touch its input")
	b, err := l.ToOrder('>')
	require.NoError(t, err)
	assert.Equal(t, dt.WithOrder('>'), b.DType)

	// SwapBytes swaps every scalar, whatever its order.
	raw := append([]byte{}, rec...)
	SwapBytes(raw, dt)
	assert.Equal(t, []byte{8, 7, 6, 5, 4, 3, 2, 1, 12, 11, 10, 9, 14, 13, 'x', 'y', 16, 15, 'z', 'w', 17, 0xaa, 0xbb, 0xcc}, raw)
}

func TestRecordRefusedByConversions(t *testing.T) {
	dt := mustRecord(t, xy(), 0)
	a, err := Zeros(dt, 3)
	require.NoError(t, err)
	assert.Equal(t, 36, len(a.Data))
	_, err = SameKind.AsType(a, dt)
	require.ErrorIs(t, err, ErrType)
	assert.Contains(t, err.Error(), "AsType converts plain dtypes only")
	_, err = Unsafe.AsType(a, MustParseDType("|V12"))
	require.ErrorIs(t, err, ErrType)
	assert.True(t, No.Allows(dt, dt), "numpy's can_cast allows a record to itself")
	assert.ErrorIs(t, Unsafe.Check(dt, dt), ErrType, "but AsType does not convert it")
	_, err = Values[uint8](a)
	assert.ErrorIs(t, err, ErrType)
	_, err = dt.MarshalText()
	assert.ErrorIs(t, err, ErrDType)
	ts, err := dt.AppendText(nil)
	require.NoError(t, err)
	assert.Equal(t, "|V12", string(ts), "the typestr is numpy's dtype.str")

	// A record whose exported fields were changed is no longer valid.
	bad := dt
	bad.ItemSize = 8
	assert.ErrorIs(t, bad.Validate(), ErrDType)
	bad = dt
	bad.Order = '<'
	assert.ErrorIs(t, bad.Validate(), ErrDType)
}

// The intern table is a cache of live layouts: dropped layouts leave it.
func TestRecordInternTableShrinks(t *testing.T) {
	count := func() int {
		internTable.Lock()
		defer internTable.Unlock()
		return len(internTable.m)
	}
	// Cleanups run on their own goroutine after a collection: give them
	// the chance, so that layouts earlier tests dropped are gone before
	// the count is taken (else they would vanish during the loop and make
	// the count meaningless).
	settle := func() {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	keep := mustRecord(t, xy(), 0)
	for i := 0; i < 5; i++ {
		settle()
	}
	before := count()
	alive := make([]DType, 0, 1000)
	for i := 0; i < 1000; i++ {
		dt, err := NewRecord([]Field{{Name: strings.Repeat("n", i+1), DType: DTypeOf[float64]()}}, 0)
		require.NoError(t, err)
		alive = append(alive, dt)
	}
	settle()
	require.GreaterOrEqual(t, count(), before+1000, "layouts in use stay in the table")
	runtime.KeepAlive(alive) // and no further: they are garbage from here
	for i := 0; i < 200 && count() > before+10; i++ {
		settle()
	}
	assert.LessOrEqual(t, count(), before+10)
	assert.True(t, keep == mustRecord(t, xy(), 0), "a live layout is still found")
}
