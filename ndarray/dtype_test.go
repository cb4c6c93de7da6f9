package ndarray

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDTypeValid(t *testing.T) {
	cases := []struct {
		in, canon string
		kind      byte
		size      int
		standard  bool
	}{
		{"|b1", "|b1", 'b', 1, true},
		{"<b1", "|b1", 'b', 1, true}, // order of one-byte items is normalised, as NumPy does
		{"|i1", "|i1", 'i', 1, true},
		{">u1", "|u1", 'u', 1, true},
		{"<i2", "<i2", 'i', 2, true},
		{">i8", ">i8", 'i', 8, true},
		{"<u4", "<u4", 'u', 4, true},
		{"<f2", "<f2", 'f', 2, true},
		{">f4", ">f4", 'f', 4, true},
		{"<f8", "<f8", 'f', 8, true},
		{"<f16", "<f16", 'f', 16, true},
		{"<c8", "<c8", 'c', 8, true},
		{">c16", ">c16", 'c', 16, true},
		{"<c32", "<c32", 'c', 32, true},
		{"|S5", "|S5", 'S', 5, false},
		{"<S5", "|S5", 'S', 5, false},
		{"<U3", "<U3", 'U', 12, false},
		{">U1", ">U1", 'U', 4, false},
		{"|V16", "|V16", 'V', 16, false},
		{"<M8", "<M8", 'M', 8, false},
		{"<M8[ns]", "<M8[ns]", 'M', 8, false},
		{">m8[10s]", ">m8[10s]", 'm', 8, false},
		{"<M8[us]", "<M8[us]", 'M', 8, false},
		{"<M8[1s]", "<M8[s]", 'M', 8, false}, // numpy writes no count of 1
		{">m8[2147483647ns]", ">m8[2147483647ns]", 'm', 8, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			dt, err := ParseDType(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.canon, dt.String())
			assert.Equal(t, c.kind, dt.Kind)
			assert.Equal(t, c.size, dt.ItemSize)
			assert.Equal(t, c.standard, dt.IsStandard())
			assert.NoError(t, dt.Validate())
		})
	}
}

func TestParseDTypeNative(t *testing.T) {
	dt, err := ParseDType("=f8")
	require.NoError(t, err)
	assert.Equal(t, NativeOrder(), dt.Order)
	assert.Equal(t, string(rune(NativeOrder()))+"f8", dt.String())
}

// typestrsRefused are strings that are not typestrs: ParseTypestr
// refuses them all, and ParseDType those numpy refuses.
var typestrsRefused = []string{
	"", "<", "<f", "f8", "<f3", "<q8", "<i0", "<b2", "|f8", "|U3", "|M8",
	"<i", "<i-1", "<i+8", "<f8 ", " <f8", "<M8[", "<M8[ns", "<M8[xs]", "<M8[]",
	"<M4", "<c4", "<i0", "<U99999999999", "<V4294967296", "<M8[010ns]", "float32",
}

func TestParseTypestrInvalid(t *testing.T) {
	for _, in := range typestrsRefused {
		t.Run(in, func(t *testing.T) {
			_, err := ParseTypestr(in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrDType), "%v", err)
			assert.Contains(t, err.Error(), "ndarray: invalid dtype: typestr "+quote(in))
		})
	}
}

// ParseDType reads every typestr as ParseTypestr does, and of the strings
// that are not typestrs accepts those numpy's np.dtype accepts, as numpy
// reads them (on a little-endian machine, "=" and no order are "<").
func TestParseDTypeReadsTypestrs(t *testing.T) {
	for _, c := range []struct{ in string }{{"|b1"}, {"<b1"}, {">u1"}, {"<i2"}, {">i8"}, {"<f2"}, {"<f16"}, {">c16"}, {"<c32"},
		{"|S5"}, {"<S5"}, {"<U3"}, {">U1"}, {"|V16"}, {"|V0"}, {"|S0"}, {"<U0"}, {"<M8"}, {"<M8[ns]"}, {">m8[10s]"}, {"=f8"}, {"<M8[2147483647ns]"}} {
		want, err := ParseTypestr(c.in)
		require.NoError(t, err, c.in)
		got, err := ParseDType(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, want, got, c.in)
	}
	numpys := map[string]string{"f8": "=f8", "|f8": "=f8", "|U3": "=U3", "|M8": "=M8", "<i+8": "<i8", "<M8[010ns]": "<M8[10ns]", "float32": "=f4", "<f": "<f4", "<i": "<i4"}
	for _, in := range typestrsRefused {
		got, err := ParseDType(in)
		want, numpy := numpys[in]
		if !numpy {
			assert.ErrorIs(t, err, ErrDType, "%q", in)
			continue
		}
		if assert.NoError(t, err, in) {
			assert.Equal(t, MustParseDType(want), got, in)
		}
	}
}

func quote(s string) string { return `"` + s + `"` }

func TestDTypeValidateRejectsNonCanonical(t *testing.T) {
	for _, dt := range []DType{
		{},
		{Order: '|', Kind: 'f', ItemSize: 8},
		{Order: '<', Kind: 'u', ItemSize: 1}, // must be '|'
		{Order: '<', Kind: 'U', ItemSize: 6},
		{Order: '<', Kind: 'f', ItemSize: 8, Unit: "ns"},
		{Order: '<', Kind: 'M', ItemSize: 8, Unit: "1ns"},
		{Order: '<', Kind: 'M', ItemSize: 8, Unit: "2147483648ns"},
	} {
		assert.ErrorIs(t, dt.Validate(), ErrDType, "%+v", dt)
	}
}
