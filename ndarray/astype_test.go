package ndarray_test

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var castTypes = strings.Fields("|b1 |i1 <i2 >i4 <i8 |u1 >u2 <u4 <u8 <f2 >f4 <f8 <c8 >c16")

// Casting verdicts and converted bytes agree with numpy's can_cast and
// astype for every pair of numeric dtypes, over values that include the
// edges of each type (in range of the target for float to integer, where C
// leaves the result undefined).
func TestAsTypeAgainstNumpy(t *testing.T) {
	out := pypeer.Run(t, `
import json, warnings
import numpy as np
warnings.simplefilter("ignore")
ts = sys.argv[1].split()
vals = [0, 1, -1, 2, 3, 7, -7, 100, -100, 127, -128, 255, 1000, -1000, 32767, -32768, 65535, 65536,
        2**31 - 1, -2**31, 2**32 - 1, 2**53 + 1, -2**53 - 1, 2**63 - 1, -2**63, 0.5, -0.5, 1.5, 2.5, -2.5,
        0.1, 1e-8, 1e-5, 65504.0, 65520.0, 1e38, 3.4e38, 1e300, float("inf"), float("-inf"), float("nan"), 1+2j, -3.5-0.25j]
res = {}
for a in ts:
    src = []
    for v in vals:
        try:
            with np.errstate(all="ignore"):
                x = np.array(v).astype(a, casting="unsafe")
            if np.array(v).dtype.kind in "fc" and np.dtype(a).kind in "iub" and not np.isfinite(v):
                continue
            src.append(x)
        except Exception:
            pass
    arr = np.array(src, dtype=a)
    res[a] = {"src": arr.tobytes().hex(), "to": {}}
    for b in ts:
        cast = {c: bool(np.can_cast(np.dtype(a), np.dtype(b), c)) for c in ("safe", "same_kind")}
        with np.errstate(all="ignore"):
            conv = arr.astype(b, casting="unsafe")
        # float to integer is undefined in C outside the target's range: keep those out
        keep = np.ones(len(arr), bool)
        if np.dtype(a).kind in "fc" and np.dtype(b).kind in "iu":
            info = np.iinfo(np.dtype(b))
            r = np.real(arr).astype("f8")
            keep = np.isfinite(r) & (r > info.min - 1) & (r < info.max + 1)
        res[a]["to"][b] = {"cast": cast, "keep": keep.tolist(), "bytes": conv.tobytes().hex()}
print(json.dumps(res))
`, nil, strings.Join(castTypes, " "))
	var res map[string]struct {
		Src string
		To  map[string]struct {
			Cast  map[string]bool
			Keep  []bool
			Bytes string
		}
	}
	require.NoError(t, json.Unmarshal(out, &res))
	checked := 0
	for _, from := range castTypes {
		fdt := ndarray.MustParseDType(from)
		data, _ := hex.DecodeString(res[from].Src)
		src, err := ndarray.New(fdt, []int{len(data) / fdt.ItemSize}, data)
		require.NoError(t, err)
		for _, to := range castTypes {
			tdt := ndarray.MustParseDType(to)
			want := res[from].To[to]
			assert.Equal(t, want.Cast["safe"], ndarray.Safe.Allows(fdt, tdt), "safe %s -> %s", from, to)
			assert.Equal(t, want.Cast["same_kind"], ndarray.SameKind.Allows(fdt, tdt), "same_kind %s -> %s", from, to)
			got, err := ndarray.Unsafe.AsType(src, tdt)
			require.NoError(t, err)
			wantBytes, _ := hex.DecodeString(want.Bytes)
			for i, keep := range want.Keep {
				if !keep {
					continue
				}
				g := got.Data[i*tdt.ItemSize : (i+1)*tdt.ItemSize]
				w := wantBytes[i*tdt.ItemSize : (i+1)*tdt.ItemSize]
				if !assert.Equal(t, hex.EncodeToString(w), hex.EncodeToString(g), "%s -> %s, element %d (% x)", from, to, i, data[i*fdt.ItemSize:(i+1)*fdt.ItemSize]) {
					break
				}
				checked++
			}
		}
	}
	t.Logf("%d converted elements agree with numpy", checked)
}

func TestAsTypeAndValuesAs(t *testing.T) {
	f4, _ := ndarray.FromSlice([]float32{1.5, -2, 3.25})
	v, err := ndarray.ValuesAs[float64](f4)
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5, -2, 3.25}, v)

	i8, _ := ndarray.FromSlice([]int64{1, -2, 1 << 40})
	v, err = ndarray.ValuesAs[float64](i8)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, -2, 1 << 40}, v)

	// Lossy casts are refused unless asked for.
	_, err = ndarray.ValuesAs[int32](f4)
	assert.ErrorIs(t, err, ndarray.ErrType)
	assert.EqualError(t, err, `ndarray: element type mismatch: cannot convert <f4 to <i4 with casting "same_kind"`)
	conv, err := ndarray.Unsafe.AsType(f4, ndarray.MustParseDType("<i4"))
	require.NoError(t, err)
	ints, _ := ndarray.Values[int32](conv)
	assert.Equal(t, []int32{1, -2, 3}, ints)

	// Byte order alone always converts, and the result is a copy.
	be, err := ndarray.Safe.AsType(f4, ndarray.MustParseDType(">f4"))
	require.NoError(t, err)
	back, _ := ndarray.ValuesAs[float32](be)
	assert.Equal(t, []float32{1.5, -2, 3.25}, back)
	same, _ := ndarray.SameKind.AsType(f4, f4.DType)
	same.Data[0] = 9
	assert.NotEqual(t, same.Data[0], f4.Data[0])

	// Strings do not convert to numbers.
	s, _ := ndarray.New(ndarray.MustParseDType("|S2"), []int{1}, []byte("ab"))
	_, err = ndarray.Unsafe.AsType(s, ndarray.DTypeOf[float64]())
	assert.ErrorIs(t, err, ndarray.ErrType)
}

// The rules by numpy's names; No and Equiv in AsType; what numpy allows
// but AsType does not compute is refused, never converted to zeros.
func TestCastingRules(t *testing.T) {
	for _, name := range []string{"no", "equiv", "safe", "same_kind", "unsafe"} {
		c, err := ndarray.ParseCasting(name)
		require.NoError(t, err)
		assert.Equal(t, name, c.String())
	}
	_, err := ndarray.ParseCasting("sometimes")
	assert.ErrorIs(t, err, ndarray.ErrType)
	assert.EqualError(t, err, `ndarray: element type mismatch: casting "sometimes": want one of no, equiv, safe, same_kind, unsafe`)
	assert.Equal(t, "same_kind", ndarray.Casting(0).String(), "the zero Casting is numpy's default")
	assert.False(t, ndarray.Casting(9).Allows(ndarray.DTypeOf[int8](), ndarray.DTypeOf[int8]()))

	f8, _ := ndarray.FromSlice([]float64{1.5, -2})
	be := ndarray.MustParseDType(">f8")
	_, err = ndarray.No.AsType(f8, be)
	assert.EqualError(t, err, `ndarray: element type mismatch: cannot convert <f8 to >f8 with casting "no"`)
	got, err := ndarray.Equiv.AsType(f8, be)
	require.NoError(t, err)
	back, _ := ndarray.Values[float64](got)
	assert.Equal(t, []float64{1.5, -2}, back)
	_, err = ndarray.Equiv.AsType(f8, ndarray.MustParseDType("<f4"))
	assert.ErrorIs(t, err, ndarray.ErrType)
	same, err := ndarray.No.AsType(f8, f8.DType)
	require.NoError(t, err)
	assert.Equal(t, f8.Data, same.Data)

	// numpy converts datetimes between units and numbers to strings;
	// AsType does neither, and says so.
	ns, _ := ndarray.New(ndarray.MustParseDType("<M8[ns]"), []int{1}, []byte{0, 0x10, 0xa5, 0xd4, 0xe8, 0, 0, 0})
	assert.True(t, ndarray.SameKind.Allows(ns.DType, ndarray.MustParseDType("<M8[s]")))
	_, err = ndarray.SameKind.AsType(ns, ndarray.MustParseDType("<M8[s]"))
	assert.EqualError(t, err, `ndarray: element type mismatch: cannot convert <M8[ns] to <M8[s]: numpy's "same_kind" casting allows it, but AsType converts only numbers (bool, integers, floats of up to 8 bytes, complex of up to 16) and a dtype to itself in the other byte order`)
	swapped, err := ndarray.Equiv.AsType(ns, ndarray.MustParseDType(">M8[ns]"))
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 0, 0xe8, 0xd4, 0xa5, 0x10, 0}, swapped.Data)
	assert.True(t, ndarray.Safe.Allows(ndarray.DTypeOf[int32](), ndarray.MustParseDType("S11")))
	assert.ErrorIs(t, ndarray.Safe.Check(ndarray.DTypeOf[int32](), ndarray.MustParseDType("S11")), ndarray.ErrType)
	assert.NoError(t, ndarray.Safe.Check(ndarray.DTypeOf[int32](), ndarray.DTypeOf[float64]()))
}
