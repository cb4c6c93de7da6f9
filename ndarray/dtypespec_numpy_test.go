package ndarray

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// numpyRead is how numpy reads a spec typed as text: a Python literal
// (or JSON) of a list, tuple or dict is np.dtype of that object, anything
// else np.dtype of the string, as ParseDType documents.
const numpyRead = `
import ast, json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")

def read(s):
    if s[:1] in "[({":
        obj = None
        try:
            obj = ast.literal_eval(s)
        except Exception:
            try:
                obj = json.loads(s)
            except Exception:
                pass
        if isinstance(obj, (list, tuple, dict)):
            return np.dtype(obj)
    return np.dtype(s)
`

// numpyReadsSpec answers, for each spec of a JSON list on stdin, numpy's
// dtype (its str, or str(dtype) for a record or subarray, and itemsize)
// or its error.
const numpyReadsSpec = numpyRead + `
out = []
for s in json.load(sys.stdin):
    try:
        d = read(s)
    except Exception as e:
        out.append({"error": "%s: %s" % (type(e).__name__, e)})
        continue
    plain = d.names is None and d.subdtype is None
    r = {"str": d.str if plain else str(d), "itemsize": d.itemsize}
    if d.names is not None:
        try:
            r["descr"] = repr(d.descr)
        except Exception:
            pass
    out.append(r)
print(json.dumps(out))
`

// specCorpus is the specs held to numpy: names, codes and typestrs in
// every byte order, kinds with sizes, datetime units, comma lists,
// subarrays, Python and JSON literals, and nonsense.
func specCorpus() []string {
	var c []string
	names := []string{"bool", "bool_", "bool8", "byte", "ubyte", "short", "ushort", "intc", "uintc", "int", "int_", "int0",
		"intp", "long", "longlong", "uint", "uint0", "uintp", "ulong", "ulonglong", "int8", "int16", "int32", "int64",
		"uint8", "uint16", "uint32", "uint64", "half", "single", "double", "float", "float_", "float16", "float32",
		"float64", "csingle", "singlecomplex", "cdouble", "cfloat", "complex", "complex_", "complex64", "complex128",
		"bytes", "bytes_", "bytes0", "string_", "str", "str_", "str0", "unicode", "unicode_", "void", "void0",
		"datetime64", "timedelta64", "longdouble", "longfloat", "float128", "clongdouble", "clongfloat", "longcomplex",
		"complex256", "object", "object_", "object0", "Float64", "Int8", "UInt8", "Complex64", "Bool", "float65",
		"int128", "float8", "string", "unicode8", "bool16"}
	c = append(c, names...)
	c = append(c, "float32", "int_", "uint8", "bool", "bool_", "complex64", "datetime64[ns]", "M8[D]", "m8", "S5", "U3", "<i4",
		">f8", "|b1", "str", "bytes", "unicode", "a5", "S", "a", "U", "V", "5S", "<U5", ">U5", "|S10", "=i2", "|u2")
	for _, n := range []string{"float32", "int16", "bool", "str", "datetime64[ns]", "timedelta64"} {
		for _, o := range "<>|=" {
			c = append(c, string(o)+n)
		}
	}
	for ch := 0x20; ch < 0x7f; ch++ {
		c = append(c, string(rune(ch)))
	}
	for _, code := range "?bBhHiIlLqQpPefdgFDGSaUVOMmc" {
		for _, o := range "<>|=" {
			c = append(c, string(o)+string(code))
		}
	}
	for _, ch := range []rune{0, 1, 7, 9, 10, 0x0b, 0x0c, 0x0d, 0x11, 0x17, 0x18, 0x1a, 0x1f} {
		c = append(c, string(ch))
	}
	for _, kind := range []string{"b", "i", "u", "f", "c", "S", "U", "V", "a", "O", "M", "m", "?", "B"} {
		for _, size := range []string{"0", "1", "2", "3", "4", "8", "10", "16", "32"} {
			for _, o := range []string{"", "<", ">", "|", "="} {
				c = append(c, o+kind+size)
			}
		}
	}
	c = append(c, datetimeSpecs()...)
	c = append(c, commaSpecs()...)
	c = append(c, literalSpecs()...)
	return c
}

func datetimeSpecs() []string {
	var c []string
	for _, unit := range []string{"", "[Y]", "[M]", "[W]", "[D]", "[h]", "[m]", "[s]", "[ms]", "[us]", "[μs]", "[ns]",
		"[ps]", "[fs]", "[as]", "[generic]", "[B]", "[10s]", "[1s]", "[25D]", "[010ns]", "[0ns]", "[-1ns]", "[+5ns]",
		"[ 5ns]", "[5 ns]", "[ns ]", "[2147483647ns]", "[2147483648ns]", "[9999999999ns]", "[10generic]", "[]", "[ns",
		"[ns]]", "[[ns]]", "[n]", "[s/1000]", "[ms/2]", "[D/24]", "[D/7]", "[W/7]", "[Y/12]", "[Y/2]", "[M/4]",
		"[h/60]", "[m/60000]", "[fs/1000]", "[as/2]", "[s/3]", "[7D/7]", "[2s/4]", "[ns/1]", "[s/ 10]", "[s/10 ]",
		"[generic/2]", "x"} {
		for _, base := range []string{"M8", "m8", "datetime64", "timedelta64"} {
			c = append(c, base+unit)
		}
	}
	for _, s := range []string{"<M8[ns]", ">M8[ns]", "|M8[ns]", "=M8", ">m8[10s]", "<datetime64[ms]", ">timedelta64",
		"M", "m", "M4", "m16", "M8M8", "datetime6", "datetime64x"} {
		c = append(c, s)
	}
	return c
}

func commaSpecs() []string {
	return []string{"f4,i2", "f4, i2", "f4 ,i2", " f4,i2", "f4,i2,", "f4,i2, ", "f4,,i2", ",f4", "f4,", "f4, ",
		"<f4,>i2", ">f4,>i2", "i1,  i2", "int8,int16", "float32,float64", "<float32,i2", ">float32,i2",
		"(3,)f4", "(3)f4", "3f4", "(2,3)f4", "(2, 3)i4", "( 2 , 3 )i4", "()f4", "(0,)f4", "0f4", "1f4", "(1,)f4",
		"2i", "2,3f4", "3,f4", "(2)f4", "(2)f4,i4", "(3,)f4,(2,)i2", "(2,)i4,(3,)f4", "i4,(2,3)f8", "(3,)<f4",
		"<(3,)f4", "<(3,)>f4", ">(3,)>f4", "=(3,)<f4", "(3,)|f4", "5S", "5S3", "5S0", "5a", "2U", "5U0", "3V",
		"(5,)S", "0S", "1S", "2M8", "M8[ns],f4", "f4,M8[ns]", "M8[ns,2],f4", "M8[s/10],f4", "(03,)f4", "(00,)f4",
		"(3,,)f4", "(,)f4", "(3 4)f4", "(3", "3)f4", "f4,i2 ;", "f4 i2", "f4 i2,f8", "a:f4", "f4,|", "f4,<",
		"3", "(3,)", "(3,)(2,)f4", "(99999999999,)f4", "(2147483648,)f4", "(65536,65536)f4", "S5,U3,V2,?",
		"(2,)S3,(3,)U2", "f8[ns]", "(3,)f4x", "f4,x", "1i", "2147483648i", "f4,i2,f8,u1,c8,b1,M8[D],m8[s]"}
}

func literalSpecs() []string {
	return []string{
		"[('a', '<f4'), ('b', '<i2', (2,))]", "[('x', '<f4'), ('y', '<f4'), ('id', '<u2')]",
		"[('pos', '<f4', (3,)), ('name', 'S4'), ('t', '>f8')]", "[('a', [('b', '<i2'), ('c', 'u1')]), ('d', '<f8', (2, 2))]",
		`[("a","f4")]`, "[('a','f4'),]", "[]", "[('a', 'f4', 1)]", "[('a', 'S', 5)]", "[('a', 'f4', ())]",
		"[('a', None)]", "[['a','f4']]", "[('a','f4',(2,),1)]", "[('a',)]", "[('', 'f4'), ('', 'i2')]",
		"[('f1', 'f4'), ('', 'i2')]", "[('a','f4'),('a','i2')]", "[(('t','a'),'f4')]", "[(('t','a'),'f4'), ('t', 'i2')]",
		"[((None,'a'),'f4')]", "[(('','a'),'f4')]", "[((3,'a'),'f4')]", "[(('t',''),'f4')]", "[(('',''),'f4')]",
		"[(('a','a'),'f4')]", "[('a', b'f4')]", "[(b'a', 'f4')]", "[(u'a', r'f4')]", "[('a', '''f4''')]",
		`[('\x61', 'f4')]`, `[('\u00e9', 'f4')]`, "[('é', 'f4')]", `[('\N{LATIN SMALL LETTER E WITH ACUTE}', 'f4')]`, `[('\ud800', 'f4')]`, `[('a', 'f4')] + [('\N{DIGIT ONE}', 'f4')]`,
		"[('a', 'f' '4')]", "[('a','f4')] # comment", "[('a',\n 'f4')]", "[('a', 'f4', [2])]", "[('a', 'f4', (2.0,))]",
		"[('a', 'f4', True)]", "[('a', ('f4', (2,)), (3,))]", "[('a', [('b','i2')], (2,))]", "[('a','2f4')]",
		"[('a', 'f4,i2')]", "[('a', 'O')]", "[('a', 'longdouble')]", "[('a', 'f16')]", "[('a', 'U3'), ('b', 'M8[ns]')]",
		"[('a', {'names': ['x'], 'formats': ['i1']})]", "[('a', ('i4', 2)), ('b', ('S', 3))]", "[('a', 'f4')", "[(a, 'f4')]",
		"('<f4', (2, 2))", "('<f4',(2,2))", "('f4', 3)", "('f4', [2, 3])", "('f4', [])", "('f4', ())", "('f4', 1)",
		"('f4', (1,))", "('f4', 0)", "('f4', -1)", "('f4', 2.0)", "('f4', True)", "('f4', (True, 2))", "('f4', 0x2)",
		"('f4', 1_0)", "('f4', +2)", "('f4', -0)", "('f4', (2, 'a'))", "('f4', ('i4',))", "('S', 5)", "('U', 3)",
		"('V', 4)", "('V', 0)", "('S5', 3)", "('S', -1)", "('S', (2,))", "('S', True)", "('U', 2.5)", "('S', None)",
		"('f8', None)", "('f4', None)", "('i8', None)", "(None, 3)", "('f4', 'i4')", "('f4', 'i2')", "('S', 'i4')",
		"('i4', [('r','u1'),('g','u1'),('b','u1'),('a','u1')])", "('V4', [('r','u1'),('g','u1'),('b','u1'),('a','u1')])",
		"('V', [('r','u1'),('g','u1')])", "(('f4', (2,)), (3,))", "(('f4', 2), 3)", "((('f4',2),3),4)", "('(2,)f4', 3)",
		"('2f4', (3,))", "('M8[ns]', 2)", "('f4', (2,), 1)", "('f4',)", "()", "(3,)", "(2, 3)", "('f4')", "(('f4'))",
		"('f4', (65536, 65536))", "('f4', (1,)*33)",
		"{'names': ['a', 'b'], 'formats': ['f4', 'i2']}", `{"names": ["a","b"], "formats": ["f4","i2"]}`,
		`{"names": ["a","b"], "formats": ["f4","i2"], "offsets": [0, 8], "itemsize": 16}`,
		"{'names': ['a', 'b'], 'formats': ['<f4', '<i2'], 'offsets': [4, 0], 'itemsize': 8}",
		"{'names': ['a', 'b'], 'formats': ['<f4', '<i2'], 'offsets': [0, 2]}",
		"{'names': ['a'], 'formats': ['f4'], 'titles': [None]}", `{"names": ["a"], "formats": ["f4"], "titles": [null]}`,
		"{'names': ['a', 'b'], 'formats': ['f4', 'i2'], 'titles': ['A', None]}", "{'names': ['a'], 'formats': ['f4'], 'titles': ['']}",
		"{'names': ['a'], 'formats': ['f4'], 'titles': [3]}", "{'names': ['a', 'b'], 'formats': ['f4', 'i2'], 'titles': ['b', None]}",
		"{'names': ['a'], 'formats': ['f4'], 'aligned': False}", "{'names': ['a', 'b'], 'formats': ['i1', 'f8'], 'aligned': True}",
		"{'names': ['a'], 'formats': ['f4'], 'aligned': 1}", `{"names": ["a"], "formats": ["f4"], "aligned": true}`,
		"{'names': 'ab', 'formats': ['f4', 'i2']}", "{'names': ['a'], 'formats': ['f4', 'i2']}", "{'names': ['a', 'b'], 'formats': ['f4']}",
		"{'names': ['a'], 'formats': ['f4'], 'metadata': {'x': 1}}", "{'names': ['a'], 'formats': ['f4'], 'itemsize': 2}",
		"{'names': ['a'], 'formats': ['f4'], 'itemsize': 6}", "{'names': ['a'], 'formats': ['f4'], 'offsets': [True]}",
		"{'names': ['a'], 'formats': ['f4'], 'offsets': [-1]}", "{'names': ['a'], 'formats': ['f4'], 'itemsize': True}",
		"{'names': ['a'], 'formats': ['f4'], 'itemsize': 4.0}", "{'names': ['a'], 'formats': ['f4'], 'titles': None}",
		"{'names': ['a'], 'formats': ['f4'], 'offsets': None}", "{'names': ('a',), 'formats': ('f4',)}",
		"{'names': ['a'], 'formats': 'f'}", "{'names': [b'a'], 'formats': ['f4']}", "{'names': ['a', 'a'], 'formats': ['f4', 'i2']}",
		"{'names': ['a'], 'formats': [('f4', (2,))], 'offsets': [0]}", "{'names': ['a', 'b'], 'formats': ['f4', '(2,)i2'], 'offsets': [0, 0]}",
		"{'names': ['a'], 'formats': ['O']}", `{"names": ["a"], "formats": ["f4"],}`, `{"names": ["a"], "formats": ["f4"], "x": 1}`,
		"{'names': [], 'formats': []}", "{}", "{'a': ('f4', 0), 'b': ('i2', 4)}", "{'b': ('i2', 4), 'a': ('f4', 0)}",
		"{'a': ('f4', 0, 'a')}", "{'a': ('f4', 0, 't')}", "{'a': ('f4', True)}", "{'a': ('f4', 4.0)}", "{'a': ('f4', '4')}",
		"{'a': ['f4', 0]}", "{'a': ('f4', -1)}", "{'a': ('f4',)}", "{-1: ['b', 'a'], 'a': ('f4', 0), 'b': ('i2', 4)}",
		"{'a': ('f4', 0), 'a': ('i2', 2)}", "{'names': ['a'], 'formats': ['f4'], [1]: 2}", `{"a": ["f4", 0]}`,
		"{'names': ['a'], 'formats': ['f4'], 'titles': ['a']}", "[(('T', 'a'), '<i4')]",
		"[('a', '<f4', (2,)), ('b', [('c', '>i8', (2, 3)), ('d', 'S0')])]", "[('a', 'U0'), ('b', 'V0'), ('c', 'S0')]",
		"{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [0, 8], 'itemsize': 16, 'titles': ['A', 'B']}",
		"[('a', 'f4')] [('b', 'i2')]", "[('a', 'f4')]\n", "{'names': ['a'], 'formats': ['f4'],}", "{'names': ['a'] 'formats': ['f4']}",
		"[('a', 'f4'), ('b', 'f4'), ('c', 'f4'), ('d', 'f4'), ('e', 'f4'), ('f', 'f4'), ('g', 'f4'), ('h', 'f4')]",
		"", " ", "x", "nonsense", "float32 ", " float32", "f4\x00", "<<f8", "<", "=", "|", ">", "'f4'", `"f4"`,
		"f 8", "f+8", "i 4", "S 5", "S+5", "U-1", "U+3", "i08", "f08", "S05", "U007", "b01", "c016", "O8", "O4",
		"S99999999999", "S2147483647", "U536870912", "V2147483647", "i4294967300", "f4294967304", "u-4",
	}
}

// Every spec numpy accepts and ndpack holds gives numpy's dtype, every
// spec numpy refuses is refused, and what numpy accepts but ndpack does
// not hold is refused for a reason listed here.
func TestParseDTypeAgainstNumpy(t *testing.T) {
	corpus := specCorpus()
	in, err := json.Marshal(corpus)
	require.NoError(t, err)
	var want []struct {
		Error    string
		Str      string
		ItemSize int
		Descr    *string
	}
	require.NoError(t, json.Unmarshal(pypeer.Run(t, numpyReadsSpec, in), &want))
	require.Len(t, want, len(corpus))
	notHeld := notHeldSpecs()
	accepted, refusedBoth, notHeldSeen, descrs := 0, 0, 0, 0
	for i, s := range corpus {
		dt, err := ParseDType(s)
		switch {
		case want[i].Error != "" && err == nil:
			t.Errorf("%q: numpy refuses (%s), ParseDType gives %s", s, want[i].Error, dt)
		case want[i].Error != "":
			refusedBoth++
			assert.True(t, errors.Is(err, ErrDType), "%q: %v", s, err)
		case err != nil:
			why, listed := notHeld[s]
			if !listed {
				t.Errorf("%q: numpy gives %s, ParseDType refuses: %v", s, want[i].Str, err)
				continue
			}
			notHeldSeen++
			assert.Contains(t, err.Error(), why, "%q", s)
		default:
			accepted++
			assert.Equal(t, want[i].Str, dt.String(), "%q", s)
			assert.Equal(t, want[i].ItemSize, dt.ItemSize, "%q", s)
			if _, derr := dt.Descr(); want[i].Descr != nil && derr == nil {
				descrs++
				assert.Equal(t, *want[i].Descr, string(dt.AppendDescr(nil)), "%q: descr", s)
			} else {
				assert.Equal(t, want[i].Descr == nil, derr != nil || !dt.IsRecord(), "%q: numpy's descr %v, Descr's error %v", s, want[i].Descr, derr)
			}
			back, err := ParseDType(dt.String())
			if assert.NoError(t, err, "%q: its String %s", s, dt) {
				assert.Equal(t, dt, back, "%q: its String %s reads back", s, dt)
			}
		}
		if _, listed := notHeld[s]; listed && (want[i].Error != "" || err == nil) {
			t.Errorf("%q is listed as numpy's and not ndpack's, but numpy says %q and ParseDType %v", s, want[i].Error, err)
		}
	}
	t.Logf("%d specs: %d give numpy's dtype (%d records' descr too), %d refused by both, %d numpy's that ndpack does not hold",
		len(corpus), accepted, descrs, refusedBoth, notHeldSeen)
	assert.Greater(t, accepted, 300)
	assert.Greater(t, refusedBoth, 300)
}

// notHeldSpecs are the corpus's specs numpy accepts and ParseDType
// refuses, with a part of the reason it gives.
func notHeldSpecs() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"longdouble", "longfloat", "float128", "clongdouble", "clongfloat", "longcomplex", "complex256",
		"g", "G", "<g", ">g", "|g", "=g", "<G", ">G", "|G", "=G", "[('a', 'longdouble')]"} {
		m[s] = "size depends on the platform"
	}
	for _, s := range []string{"object", "object_", "object0", "O", "<O", ">O", "|O", "=O", "O4", "O8", "<O4", ">O4", "|O4", "=O4",
		"<O8", ">O8", "|O8", "=O8", "[('a', 'O')]", "{'names': ['a'], 'formats': ['O']}"} {
		m[s] = "object dtype"
	}
	for _, s := range []string{"\x00", "\x01", "\x07", "\t", "\n", "\x0b", "\x0c", "\r", "\x11", "\x17", "\x1a"} {
		m[s] = "control character"
	}
	for s, why := range map[string]string{
		"M8[0ns]": "0 ns", "m8[0ns]": "0 ns", "datetime64[0ns]": "0 ns", "timedelta64[0ns]": "0 ns",
		"U-1": "negative size", "S99999999999": "low 32 bits", "i4294967300": "low 32 bits", "f4294967304": "low 32 bits",
		"S2147483647": "more than", "V2147483647": "more than", "U536870912": "low 32 bits", "('S', -1)": "negative size",
		"[(('','a'),'f4')]": "empty title", "[((None,'a'),'f4')]": "title None", "{'names': ['a'], 'formats': ['f4'], 'titles': ['']}": "empty title",
		"[((3,'a'),'f4')]": "title 3", "{'names': ['a'], 'formats': ['f4'], 'titles': [3]}": "title 3",
		"{'names': ['a', 'b'], 'formats': ['i1', 'f8'], 'aligned': True}": "aligned",
		`{"names": ["a"], "formats": ["f4"], "aligned": true}`:            "aligned",
		"{'names': ['a'], 'formats': ['f4'], 'metadata': {'x': 1}}":       "metadata",
		"('i4', [('r','u1'),('g','u1'),('b','u1'),('a','u1')])":           "union",
		`[('\N{LATIN SMALL LETTER E WITH ACUTE}', 'f4')]`:                 "Unicode name",
		`[('\ud800', 'f4')]`: "lone surrogate",
	} {
		m[s] = why
	}
	return m
}
