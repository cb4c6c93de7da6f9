package ndarray

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What ParseDType makes of the specs a user types, on this little-endian
// machine's numpy (TestParseDTypeAgainstNumpy holds them all to numpy).
func TestParseDTypeSpecs(t *testing.T) {
	if NativeOrder() != '<' {
		t.Skip("the table is numpy's on a little-endian machine")
	}
	for spec, want := range map[string]string{
		"float32": "<f4", "int_": "<i8", "long": "<i8", "intc": "<i4", "longlong": "<i8", "uint8": "|u1", "bool": "|b1",
		"bool_": "|b1", "complex64": "<c8", "datetime64[ns]": "<M8[ns]", "M8[D]": "<M8[D]", "m8": "<m8", "S5": "|S5",
		"U3": "<U3", "<i4": "<i4", ">f8": ">f8", "|b1": "|b1", "str": "<U0", "bytes": "|S0", "unicode": "<U0", "a5": "|S5",
		"f4,i2":                          "[('f0', '<f4'), ('f1', '<i2')]",
		"(3,)f4":                         "('<f4', (3,))",
		"('<f4',(2,2))":                  "('<f4', (2, 2))",
		"[('a','<f4'),('b','<i2',(2,))]": "[('a', '<f4'), ('b', '<i2', (2,))]",
		"{'names': ['a', 'b'], 'formats': ['f4', 'i2']}":                                       "[('a', '<f4'), ('b', '<i2')]",
		`{"names": ["a", "b"], "formats": ["f4", "i2"]}`:                                       "[('a', '<f4'), ('b', '<i2')]",
		"{'names': ['a'], 'formats': ['f4'], 'offsets': [4], 'itemsize': 12, 'titles': ['A']}": "{'names': ['a'], 'formats': ['<f4'], 'offsets': [4], 'titles': ['A'], 'itemsize': 12}",
		"{'x': ('<i2', 2), 'y': ('u1', 0)}":                                                    "{'names': ['y', 'x'], 'formats': ['u1', '<i2'], 'offsets': [0, 2], 'itemsize': 4}",
	} {
		dt, err := ParseDType(spec)
		if assert.NoError(t, err, spec) {
			assert.Equal(t, want, dt.String(), spec)
			assert.NoError(t, dt.Validate(), spec)
		}
	}
}

// Refusals say what numpy makes of the spec and why ndpack does not hold
// it, or that numpy refuses it too.
func TestParseDTypeRefusals(t *testing.T) {
	for spec, want := range map[string]string{
		"longdouble":                 `ndarray: invalid dtype: "longdouble": numpy's long double, whose size depends on the platform (16 bytes on 64-bit Linux, 8 on Windows and Apple silicon); a typestr says the size: "<f16" (or "<c32" for its complex)`,
		"complex256":                 `ndarray: invalid dtype: "complex256": numpy's long double, whose size depends`,
		"G":                          `ndarray: invalid dtype: "G": numpy's long double`,
		"O":                          `ndarray: invalid dtype: "O": numpy's object dtype, references to Python objects (pickles in a file), which ndpack does not hold`,
		"float65":                    `ndarray: invalid dtype: "float65": not a dtype numpy knows (np.dtype raises "data type 'float65' not understood")`,
		"i3":                         `ndarray: invalid dtype: "i3": not a dtype numpy knows`,
		"x:f4":                       `ndarray: invalid dtype: "x:f4": not a dtype numpy knows`,
		"f4,x":                       `ndarray: invalid dtype: "f4,x": field f1: not a dtype numpy knows (np.dtype raises "data type 'x' not understood")`,
		"<(3,)>f4":                   `ndarray: invalid dtype: "<(3,)>f4": item 1 has two byte orders, < and >`,
		"M8[xs]":                     `ndarray: invalid dtype: "M8[xs]": numpy knows no datetime unit "xs"`,
		"('f4', 'i2')":               `ndarray: invalid dtype: "('f4', 'i2')": <f4 and <i2 differ in size`,
		"[('a', 'f4'), ('a', 'i2')]": `ndarray: invalid dtype: "[('a', 'f4'), ('a', 'i2')]": field 1: the name 'a' is used twice`,
		"{'names': ['a'], 'formats': ['f4'], 'aligned': True}":         `an aligned struct ('aligned': True), a flag ndpack does not keep`,
		"{'names': ['a'], 'formats': ['f4'], 'itemsize': 2}":           `'itemsize' 2 is less than the 4 bytes the fields need`,
		"('i4', [('r', 'u1'), ('g', 'u1'), ('b', 'u1'), ('a', 'u1')])": `numpy's union of <i4 with the fields of [('r', 'u1'), ('g', 'u1'), ('b', 'u1'), ('a', 'u1')], a view ndpack does not hold`,
		strings.Repeat("x", 100):                                       `ndarray: invalid dtype: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"... (100 bytes): not a dtype numpy knows (np.dtype raises "data type 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... not understood")`,
		"\x07":                                                         `ndarray: invalid dtype: "\a": numpy reads the control character '\a' as its type number 7 (int64)`,
	} {
		_, err := ParseDType(spec)
		require.ErrorIs(t, err, ErrDType, spec)
		assert.Contains(t, err.Error(), want, spec)
		assert.NotContains(t, err.Error(), "invalid dtype: dtype", spec)
	}
}

// Hostile specs cost time linear in their length and are refused, or
// read, without deep recursion.
func TestParseDTypeHostile(t *testing.T) {
	for name, spec := range map[string]string{
		"deep list":      strings.Repeat("[", 1<<16),
		"deep tuple":     strings.Repeat("(", 1<<16) + "'f4', 2" + strings.Repeat(")", 1<<16),
		"deep dtype":     strings.Repeat("[('a', ", 200) + "'f4'" + strings.Repeat(")]", 200),
		"many keys":      "{" + strings.Repeat("1: 2, ", 1<<17) + "}",
		"many strings":   "[('a', " + strings.Repeat("'f' ", 1<<17) + ")]",
		"many fields":    strings.Repeat("f4,", 1<<17),
		"long name":      strings.Repeat("f", 1<<20),
		"many dims":      "(" + strings.Repeat("1,", 1<<16) + ")f4",
		"many subarrays": strings.Repeat("(", 1<<10) + "'f4'" + strings.Repeat(", 1)", 1<<10),
	} {
		start := time.Now()
		_, err := ParseDType(spec)
		assert.ErrorIs(t, err, ErrDType, name)
		assert.Less(t, time.Since(start), 2*time.Second, name)
		assert.Less(t, len(err.Error()), 400, name)
	}
	// A record of the most fields is read.
	dt, err := ParseDType(strings.Repeat("u1,", MaxRecordFields))
	require.NoError(t, err)
	assert.Equal(t, MaxRecordFields, dt.NumFields())
}

// Every type name numpy lists in np.sctypeDict reads as a dtype or is
// refused with a reason; a name needs no byte order and takes none.
func TestParseDTypeNames(t *testing.T) {
	for name, entry := range typeNames {
		dt, err := ParseDType(name)
		if strings.HasPrefix(entry, "!") {
			assert.ErrorContains(t, err, entry[1:], name)
			continue
		}
		if assert.NoError(t, err, name) {
			assert.Equal(t, MustParseDType(entry), dt, name)
		}
		_, err = ParseDType(">" + name)
		assert.ErrorIs(t, err, ErrDType, name)
	}
}

// A spec never panics ParseDType; what it accepts is a valid dtype whose
// String reads back as the same dtype.
func FuzzParseDType(f *testing.F) {
	for _, s := range specCorpus() {
		f.Add(s)
	}
	for _, s := range []string{"float64", ">i2", "[('a', [('b', '<i2')]), ('d', '<f8', (2, 2))]", "M8[ns]", "U5", "(", "[(", "x:",
		"{'a': ('f4', 0, 'x'), -1: ['a']}", `{"names": ["a"], "formats": ["f4"], "titles": ["\ud800"]}`, "[('a', 'f4', 1_0_0)]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dt, err := ParseDType(s)
		if err != nil {
			return
		}
		if verr := dt.Validate(); verr != nil {
			t.Fatalf("%q gave an invalid dtype: %v", s, verr)
		}
		back, err := ParseDType(dt.String())
		if err != nil || back != dt {
			t.Fatalf("%q gave %s, which reads back as %v, %v", s, dt, back, err)
		}
		if ts, err := ParseTypestr(s); err == nil && ts != dt {
			t.Fatalf("%q is the typestr of %s but ParseDType gives %s", s, ts, dt)
		}
	})
}

// A DType in JSON or other text is read as ParseDType reads it, and a
// failed read leaves it as it was.
func TestDTypeUnmarshalTextTakesSpecs(t *testing.T) {
	var v struct{ DType DType }
	require.NoError(t, json.Unmarshal([]byte(`{"DType": "[('x', '<f4'), ('y', 'u1')]"}`), &v))
	assert.Equal(t, "[('x', '<f4'), ('y', 'u1')]", v.DType.String())
	require.NoError(t, json.Unmarshal([]byte(`{"DType": ">i2"}`), &v))
	assert.Equal(t, MustParseDType(">i2"), v.DType)
	err := json.Unmarshal([]byte(`{"DType": "longdouble"}`), &v)
	assert.ErrorIs(t, err, ErrDType)
	assert.Equal(t, MustParseDType(">i2"), v.DType)
}
