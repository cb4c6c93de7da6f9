package npybridge

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// descrCandidates are spellings a writer might put in a header: every type
// code with and without sizes and byte orders, and numpy's type names.
func descrCandidates() []string {
	var out []string
	for _, c := range strings.Split("? b B h H i I l L q Q p P e f d g F D G S a U V c M m O u x", " ") {
		for _, pre := range []string{"", "<", ">", "=", "|"} {
			for _, size := range []string{"", "0", "1", "2", "3", "4", "6", "8", "16", "32"} {
				out = append(out, pre+c+size)
				if size != "" {
					out = append(out, pre+size+c)
				}
			}
		}
	}
	for _, n := range strings.Fields(`bool bool_ bool8 int8 byte int16 short int32 intc int64 int int_ int0 intp
		long longlong uint8 ubyte uint16 ushort uint32 uintc uint64 uint uint0 uintp ulong ulonglong
		float16 half float32 single float64 float float_ double float128 longdouble longfloat
		complex64 csingle singlecomplex complex128 complex complex_ cdouble cfloat complex256
		clongdouble clongfloat longcomplex str str_ unicode unicode_ bytes bytes_ string_ void void0
		object object_ object0 datetime64 timedelta64 datetime64[ns] timedelta64[10s] datetime64[D]
		M8[ns] M8[us] m8[2h] M8[3] M8[xs] M[ns] float65 2S4 S-1 i4x`) {
		out = append(out, n)
		for _, pre := range []string{"<", ">", "=", "|"} {
			out = append(out, pre+n)
		}
	}
	return out
}

// Every spelling np.load accepts reads to the dtype numpy gives it, and
// every one it refuses is refused.
func TestDescrSpellingsAgainstNumpy(t *testing.T) {
	cands := descrCandidates()
	in, _ := json.Marshal(cands)
	out := pypeer.Run(t, `
import io, json, warnings
import numpy as np
warnings.simplefilter("ignore")
res = []
for c in json.load(sys.stdin):
    h = "{'descr': %r, 'fortran_order': False, 'shape': (2,), }" % c
    h = h + " " * (64 - (10 + len(h) + 1) % 64) + "\n"
    b = b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + b"\0" * 4096
    try:
        a = np.load(io.BytesIO(b))
        if a.shape != (2,) or a.dtype.fields is not None:
            res.append("other " + str(a.dtype) + str(a.shape))
        else:
            res.append(a.dtype.str)
    except ValueError as e:
        res.append("pickle" if "allow_pickle" in str(e) else "refused")
    except Exception as e:
        res.append("refused")
print(json.dumps(res))
`, in)
	var numpy []string
	require.NoError(t, json.Unmarshal(out, &numpy))
	require.Len(t, numpy, len(cands))
	verdicts := map[string]int{}
	for i, c := range cands {
		h := npyWith(1, "{'descr': '"+c+"', 'fortran_order': False, 'shape': (2,), }\n", make([]byte, 64))
		got, err := ReadOptions{}.ReadHeader(bytes.NewReader(h))
		want := numpy[i]
		switch {
		case want == "refused" || strings.HasPrefix(want, "other "):
			// Sub-arrays ("2S4") change the shape: refused, as not
			// an array ndarray holds as such.
			verdicts["refused"]++
			if assert.Error(t, err, "%q: numpy says %s", c, want) {
				assert.ErrorIs(t, err, ndarray.ErrMalformed, c)
			}
		case want == "pickle":
			verdicts["pickle"]++
			assert.ErrorIs(t, err, ErrUnsupported, c)
		default:
			verdicts["read"]++
			if assert.NoError(t, err, "%q: numpy reads it as %s", c, want) {
				assert.Equal(t, want, got.DType.String(), "%q", c)
			}
		}
	}
	t.Logf("%d spellings: %v", len(cands), verdicts)
	assert.Greater(t, verdicts["read"], 700)
}

func TestDescrExamples(t *testing.T) {
	native := string(ndarray.NativeOrder())
	for descr, want := range map[string]string{
		"S6": "|S6", "6S": "|S6", "|a6": "|S6", "<25U": "<U25", "|i8": native + "i8", ">i": ">i4",
		"|S0": "|S0", "|V0": "|V0", "float64": native + "f8", "c": "|S1", "b": "|i1", "b1": "|b1",
		">M8[ns]": ">M8[ns]", "datetime64[us]": native + "M8[us]", "U": native + "U0",
	} {
		dt, err := parseDescr(descr)
		require.NoError(t, err, descr)
		assert.Equal(t, want, dt.String(), descr)
	}
	for _, descr := range []string{"O", "|O", "object", "O8", "2O"} {
		assert.True(t, isObjectDescr(descr), descr)
	}
	for _, descr := range []string{"", "|", "q2", "<float64", "i3", "b2", "2S4", "S-1", "M[ns]", "float65"} {
		_, err := parseDescr(descr)
		assert.ErrorIs(t, err, ndarray.ErrDType, descr)
	}
}
