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

// NaN, infinities and floats out of an integer's range convert as numpy
// converts them on x86-64 (INT_MIN for int32 and int64, 0 once cut to a
// byte, 2^63 for a NaN to uint64...), and CastWarningsOf counts the
// elements numpy warns of, as "invalid value encountered in cast" (float
// to integer), "overflow encountered in cast" (to a narrower float) and
// its ComplexWarning. numpy converts each value here in an array of its
// own: its uint32 conversion of arrays of 4 and more elements takes
// another path (2^31 for what its scalar path makes 0) that ndpack does
// not follow.
func TestAsTypeInvalidAsNumpy(t *testing.T) {
	out := pypeer.Run(t, `
import json, warnings
import numpy as np
vals = [float("nan"), float("inf"), float("-inf"), 1e20, -1e20, 3e9, -3e9, 300.0, -300.0, 70000.0, -1.0,
        2.0**63, 2.0**64, 1.5e19, -2.0**63, 2.0**31, -2.0**31 - 1, -2.0**31 - 0.5, 65504.0, 65520.0, -0.5, 255.7, 1e300, 3.5e38]
pairs = [(s, d) for s in ["<f2", "<f4", ">f8", "<c8", "<c16"] for d in ["|i1", "<i2", ">i4", "<i8", "|u1", "<u2", "<u4", ">u8", "|b1"]]
pairs += [(s, d) for s in [">f8", "<c16", "<i8", ">u8", "<u4", "<i4", "<u2", "<f4"] for d in ["<f2", ">f4", "<c8", "<f8"]]
res = []
for s, d in pairs:
    src, dst, inv, ovf, cw = [], [], [], [], False
    for v in vals:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if np.dtype(s).kind in "iu":
                if v != v or abs(v) == float("inf"):
                    continue
                x = np.array([v]).astype(s)
            else:
                x = np.array([v * (1 - 0.5j) if np.dtype(s).kind == "c" else v]).astype(s)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            y = x.astype(d)
        msgs = [str(w.message) for w in ws]
        src.append(x.tobytes().hex()); dst.append(y.tobytes().hex())
        inv.append("invalid value encountered in cast" in msgs)
        ovf.append("overflow encountered in cast" in msgs)
        cw = cw or "Casting complex values to real discards the imaginary part" in msgs
    res.append({"from": s, "to": d, "src": src, "dst": dst, "invalid": inv, "overflow": ovf, "complex": cw})
print(json.dumps(res))
`, nil)
	var cases []struct {
		From, To          string
		Src, Dst          []string
		Invalid, Overflow []bool
		Complex           bool
	}
	require.NoError(t, json.Unmarshal(out, &cases))
	require.Len(t, cases, 77)
	checked, warned := 0, 0
	for _, c := range cases {
		from, to := ndarray.MustParseDType(c.From), ndarray.MustParseDType(c.To)
		data, _ := hex.DecodeString(strings.Join(c.Src, ""))
		a, err := ndarray.New(from, []int{len(c.Src)}, data)
		require.NoError(t, err)
		got, err := ndarray.Unsafe.AsType(a, to)
		require.NoError(t, err)
		w := ndarray.CastWarningsOf(a, to)
		invalid, overflow := 0, 0
		for i := range c.Src {
			one, _ := hex.DecodeString(c.Src[i])
			g := got.Data[i*to.ItemSize : (i+1)*to.ItemSize]
			assert.Equal(t, c.Dst[i], hex.EncodeToString(g), "%s -> %s of %s", c.From, c.To, c.Src[i])
			e, _ := ndarray.New(from, []int{1}, one)
			ew := ndarray.CastWarningsOf(e, to)
			assert.Equal(t, c.Invalid[i], ew.Invalid == 1, "invalid: %s -> %s of %s", c.From, c.To, c.Src[i])
			assert.Equal(t, c.Overflow[i], ew.Overflow == 1, "overflow: %s -> %s of %s", c.From, c.To, c.Src[i])
			invalid += b2i(c.Invalid[i])
			overflow += b2i(c.Overflow[i])
			checked++
		}
		assert.Equal(t, invalid, w.Invalid, "%s -> %s", c.From, c.To)
		assert.Equal(t, overflow, w.Overflow, "%s -> %s", c.From, c.To)
		assert.Equal(t, c.Complex, w.DiscardsImaginary, "%s -> %s", c.From, c.To)
		warned += invalid + overflow
	}
	t.Logf("%d conversions agree with numpy's values and warnings (%d warned of)", checked, warned)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
