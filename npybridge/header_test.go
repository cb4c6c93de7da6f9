package npybridge

import (
	"bytes"
	"encoding/binary"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
)

// npyWith builds an NPY file from raw header text, as some writer might.
func npyWith(major byte, text string, data []byte) []byte {
	b := []byte(Magic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(text)))
	}
	return append(append(b, text...), data...)
}

var six = []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}

func TestReadToleratesWhatNumpyAccepts(t *testing.T) {
	want, err := ndarray.New(ndarray.MustParseDType("<u2"), []int{2, 3}, six)
	require.NoError(t, err)
	cases := map[string][]byte{
		"numpy 1.24":        AppendHeader(nil, want.DType, want.Shape),
		"double quotes":     npyWith(1, `{"descr": "<u2", "fortran_order": False, "shape": (2, 3)}`+"\n", nil),
		"keys reordered":    npyWith(1, "{'shape': (2, 3), 'descr': '<u2', 'fortran_order': False}\n", nil),
		"no trailing comma": npyWith(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3)}", nil),
		"16-byte alignment": npyWith(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }      \n", nil),
		"no padding":        npyWith(1, "{'descr':'<u2','fortran_order':False,'shape':(2,3)}", nil),
		"pretty-printed":    npyWith(1, "{'descr': '<u2',\n 'fortran_order': False,\n 'shape': (2,\n           3)}\n", nil),
		"python 2 longs":    npyWith(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2L, 3L), }\n", nil),
		"comment":           npyWith(1, "{'descr': '<u2', # the dtype\n 'fortran_order': False, 'shape': (2, 3)}\n", nil),
		"version 2.0":       npyWith(2, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }\n", nil),
		"version 3.0":       npyWith(3, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }\n", nil),
	}
	for name, file := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Read(bytes.NewReader(append(append([]byte{}, file...), six...)))
			require.NoError(t, err)
			assert.True(t, want.Equal(got), "%v", got)
		})
	}
}

// Python reads 2_0 as 20 and refuses 0_2 (a leading zero).
func TestIntegerLiterals(t *testing.T) {
	file := npyWith(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2_0, 3), }\n", make([]byte, 60))
	got, err := Read(bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, []int{20, 3}, got.Shape)
	_, err = Read(bytes.NewReader(npyWith(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (0_2, 3), }\n", make([]byte, 6))))
	assert.ErrorIs(t, err, ndarray.ErrMalformed)
	assert.Contains(t, err.Error(), "leading zeros")
}

func TestReadRejects(t *testing.T) {
	h := func(text string) []byte { return npyWith(1, text, six) }
	cases := []struct {
		name  string
		in    []byte
		class error
		msg   string
	}{
		{"empty", nil, ndarray.ErrTruncated, "npybridge: truncated input at byte 0: the file ends inside the magic string"},
		{"bad magic", []byte("\x93NUMPZ\x01\x00\x00\x00"), ErrNotNPY, `the file starts with "\x93NUMPZ"`},
		{"version 4.0", []byte("\x93NUMPY\x04\x00\x00\x00"), ErrVersion, "at byte 6: version 4.0; only 1.0, 2.0 and 3.0 exist"},
		{"version 1.1", []byte("\x93NUMPY\x01\x01\x00\x00"), ErrVersion, "version 1.1"},
		{"truncated header", npyWith(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }", nil)[:30], ndarray.ErrTruncated, "the file ends inside the 59-byte header"},
		{"header too large", npyWith(2, "{"+strings.Repeat(" ", 10001)+"}", nil), errHeaderTooLarge, "header of 10003 bytes exceeds the limit of 10000"},
		{"not a dict", h("[1, 2]"), ndarray.ErrMalformed, "the header is a list, not a dict"},
		{"not a literal", h("{'descr': dtype('<u2')}"), ndarray.ErrMalformed, `name "dtype" is not a literal`},
		{"syntax", h("{'descr': '<u2' 'shape': (2, 3)}"), ndarray.ErrMalformed, "expected ',' or '}'"},
		{"unclosed", h("{'descr': '<u2', "), ndarray.ErrMalformed, "header text ends where a value should be"},
		{"missing key", h("{'descr': '<u2', 'shape': (2, 3)}"), ndarray.ErrMalformed, `missing key "fortran_order"`},
		{"extra key", h("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), 'x': 1}"), ndarray.ErrMalformed, `unexpected key "x"`},
		{"duplicate key", h("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), 'shape': (2, 3)}"), ndarray.ErrMalformed, `duplicate key "shape"`},
		{"fortran_order int", h("{'descr': '<u2', 'fortran_order': 0, 'shape': (2, 3)}"), ndarray.ErrMalformed, "fortran_order is an int, not True or False"},
		{"fortran_order str", h("{'descr': '<u2', 'fortran_order': 'False', 'shape': (2, 3)}"), ndarray.ErrMalformed, "fortran_order is a str"},
		{"shape a list", h("{'descr': '<u2', 'fortran_order': False, 'shape': [2, 3]}"), ndarray.ErrMalformed, "shape is a list, not a tuple"},
		{"shape an int", h("{'descr': '<u2', 'fortran_order': False, 'shape': (6)}"), ndarray.ErrMalformed, "shape is an int, not a tuple"},
		{"dimension a str", h("{'descr': '<u2', 'fortran_order': False, 'shape': (2, '3')}"), ndarray.ErrMalformed, "dimension 1 of shape is a str, not an int"},
		{"dimension a float", h("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3.0)}"), ndarray.ErrMalformed, "only decimal integers are supported"},
		{"dimension a bool", h("{'descr': '<u2', 'fortran_order': False, 'shape': (True, 6)}"), ndarray.ErrMalformed, "dimension 0 of shape is a bool"},
		{"negative dimension", h("{'descr': '<u2', 'fortran_order': False, 'shape': (-2, -3)}"), ndarray.ErrShape, "dimension 0 of shape is negative"},
		{"dimension over int64", h("{'descr': '<u2', 'fortran_order': False, 'shape': (99999999999999999999,)}"), ndarray.ErrShape, "dimension 0 of shape overflows int"},
		{"element count overflow", h("{'descr': '<u2', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"), ndarray.ErrShape, "element count of shape (4294967296, 4294967296) overflows int"},
		{"byte count overflow", h("{'descr': '<u2', 'fortran_order': False, 'shape': (4611686018427387904,)}"), ndarray.ErrShape, "byte count"},
		{"unknown descr", h("{'descr': '<q2', 'fortran_order': False, 'shape': (2, 3)}"), ndarray.ErrDType, `descr "<q2" is not a dtype numpy reads`},
		{"descr not a str", h("{'descr': 8, 'fortran_order': False, 'shape': (2, 3)}"), ndarray.ErrMalformed, "descr is an int, not a str"},
		{"object", h("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}"), ErrUnsupported, `descr "|O" is an object array (pickle), which is read, as data and running nothing, only when allowed (ReadOptions.AllowObjects)`},
		{"object field", h("{'descr': [('a', '<u2'), ('b', [('c', ('|O', (2,)))])], 'fortran_order': False, 'shape': (2,)}"), ErrUnsupported, `at byte 49: descr "|O" is an object array (pickle)`},
		{"dict descr", h("{'descr': {'names': ['a'], 'formats': ['<u2'], 'offsets': [0], 'itemsize': 2}, 'fortran_order': False, 'shape': (2,)}"), ndarray.ErrMalformed, "at byte 21: field 0 has 5 items, not (name, format) or (name, format, shape)"},
		{"field name an int", h("{'descr': [(1, '<u2')], 'fortran_order': False, 'shape': (2,)}"), ndarray.ErrMalformed, "at byte 22: field 0: field names must be strings, this one is an int"},
		{"duplicate field", h("{'descr': [('a', '<u2'), ('a', '<u2')], 'fortran_order': False, 'shape': (2,)}"), ndarray.ErrDType, "at byte 20: ndarray: invalid dtype: field 1 (\"a\"): name already used as a name or title"},
		{"field of one item", h("{'descr': [('a',)], 'fortran_order': False, 'shape': (2,)}"), ndarray.ErrMalformed, "field 0 has 1 item"},
		{"negative subarray", h("{'descr': [('a', '<u2', -1)], 'fortran_order': False, 'shape': (2,)}"), ndarray.ErrMalformed, "dimension smaller than zero"},
		{"empty list subarray", h("{'descr': [('a', '<u2', [])], 'fortran_order': False, 'shape': (2,)}"), ndarray.ErrMalformed, "a subarray shape of []"},
		{"subarray descr", h("{'descr': ('<u2', (3,)), 'fortran_order': False, 'shape': (2,)}"), ndarray.ErrMalformed, "np.load cannot shape"},
		{"int title", h("{'descr': [((1, 'a'), '<u2')], 'fortran_order': False, 'shape': (2,)}"), ErrUnsupported, "ndpack holds only str titles"},
		{"too deep", h("{'descr': " + strings.Repeat("[('a', ", 33) + "'<u2'" + strings.Repeat(")]", 33) + ", 'fortran_order': False, 'shape': (2,)}"), ndarray.ErrDType, "MaxRecordDepth"},
		{"escapes", h(`{'descr': '<u\q', 'fortran_order': False, 'shape': (2, 3)}`), ndarray.ErrMalformed, "unknown escape sequence \\q"},
		{"surrogate", h(`{'descr': [('\ud800', '<u2')], 'fortran_order': False, 'shape': (2,)}`), ndarray.ErrMalformed, "lone surrogate"},
		{"deep nesting", h("{'descr': " + strings.Repeat("(", 120) + "}"), ndarray.ErrMalformed, "nested deeper than 100"},
		{"v3 not utf-8", npyWith(3, "{'descr': '<u2\xff', 'fortran_order': False, 'shape': (2, 3)}", six), ndarray.ErrMalformed, "must be UTF-8"},
		{"short data", npyWith(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3)}", six[:11]), ndarray.ErrTruncated, "the header announces 12 data bytes (shape (2, 3) of <u2), the file has 11"},
		{"trailing garbage", h("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3)} x"), ndarray.ErrMalformed, `unexpected 'x' after the header's dict`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(c.in))
			require.Error(t, err)
			assert.ErrorIs(t, err, c.class)
			assert.Contains(t, err.Error(), c.msg)
			assert.True(t, strings.HasPrefix(err.Error(), "npybridge: "), err.Error())
			// Through a plain reader (no Len) the result is the same.
			_, err2 := Read(io.MultiReader(bytes.NewReader(c.in)))
			assert.ErrorIs(t, err2, c.class)
		})
	}
}

func TestMaxHeaderSizeOption(t *testing.T) {
	text := "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3)}" + strings.Repeat(" ", 20000) + "\n"
	file := append(npyWith(2, text, nil), six...)
	_, err := Read(bytes.NewReader(file))
	assert.ErrorIs(t, err, errHeaderTooLarge)
	a, err := ReadOptions{MaxHeaderSize: 30000}.Read(bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, a.Shape)
}

// TestHugeClaimFailsAtOnce: 10^12 elements announced by a 200-byte file.
func TestHugeClaimFailsAtOnce(t *testing.T) {
	file := npyWith(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }"+strings.Repeat(" ", 40)+"\n", nil)
	file = append(file, make([]byte, 200-len(file))...)
	require.Len(t, file, 200)
	for name, r := range map[string]func() io.Reader{
		"sized":   func() io.Reader { return bytes.NewReader(file) },
		"unsized": func() io.Reader { return io.MultiReader(bytes.NewReader(file)) },
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Read(r())
		runtime.ReadMemStats(&after)
		assert.ErrorIs(t, err, ndarray.ErrTruncated, name)
		assert.Contains(t, err.Error(), "the header announces 8000000000000 data bytes", name)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "%s: allocated too much", name)
	}
}

func TestAppendHeaderText(t *testing.T) {
	// The exact text from FACTS.md for a (2, 3) <f8 array.
	h := AppendHeader(nil, ndarray.DTypeOf[float64](), []int{2, 3})
	assert.Len(t, h, 128)
	assert.Equal(t, "\x93NUMPY\x01\x00\x76\x00{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", string(h[:69]))
	assert.Equal(t, strings.Repeat(" ", 128-69-1)+"\n", string(h[69:]))
	// 0-d: no growth-axis spaces; 1-tuples keep their comma.
	assert.Contains(t, string(AppendHeader(nil, ndarray.DTypeOf[float64](), nil)), "'shape': (), }")
	assert.Contains(t, string(AppendHeader(nil, ndarray.DTypeOf[float64](), []int{5})), "'shape': (5,), }")
}

func TestReadHeaderLeavesDataUnread(t *testing.T) {
	a, _ := ndarray.New(ndarray.MustParseDType("<u2"), []int{2, 3}, six)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, a))
	r := bytes.NewReader(buf.Bytes())
	h, err := ReadOptions{}.ReadHeader(r)
	require.NoError(t, err)
	assert.Equal(t, int64(128), h.DataOffset)
	assert.Equal(t, int64(12), h.DataLen())
	assert.Equal(t, 12, r.Len())
}
