package pickle

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"github.com/ndpack/ndpack/internal/testutil/pycanon"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// pyCases builds numpy object arrays, pickles each with protocols 2 to 5
// as numpy.lib.format.write_array does (pickle.dump(array, fp,
// protocol=N)), and prints, for each, the pickle and pycanon.Of() of what
// pickle.loads gives back (numpy's own reading with allow_pickle=True).
const pyCases = pycanon.Python + `
import pickle, json

shared = [1, 2]
zero_d = np.empty((), dtype=object)
zero_d[()] = 'only'
cases = {
    'strings': objarr(['alpha', '\u03b2eta', '', 'x', '\u65e5\u672c\u8a9e', 'a' * 300, '\U0001f600']),
    'bytes': objarr([b'', b'\x00', b'abc\xff', b'y' * 300]),
    'ints': objarr([0, 255, 256, 65535, 65536, -1, 2**31 - 1, -2**31, 2**31, 2**63 - 1, -2**63, 2**64, -(2**100), 2**2100, -2**2100, -128, -129, 127, 128]),
    'floats': objarr([0.0, -0.0, 1.5, float('inf'), float('-inf'), float('nan'), 1e-310]),
    'none_bool': objarr([None, True, False]),
    'nested': objarr([[1, [2, 'ab']], [], ['b'], [[[]]]]),
    'multidim': objarr(['a0', 'a1', 'a2', 'b0', 'b1', 'b2'], (2, 3)),
    'fortran': objarr(['a0', 'a1', 'a2', 'b0', 'b1', 'b2'], (2, 3), 'F'),
    'tuple_dict': objarr([(1, 'ab'), {'k': [1, 2], 3: None, (1, 2): 't'}, (), (1, 2, 3, 4)]),
    'complex': objarr([1 + 2j, complex(0, -1)]),
    'set': objarr([{1, 2, 3}]),
    'frozenset': objarr([frozenset(['q'])]),
    'arrays': objarr([np.arange(3, dtype='<i4'), np.arange(6.).reshape(2, 3), np.array(['ab', 'c']),
                      np.array([b'xy', b'z']), np.array([True, False]),
                      np.zeros(0), np.array([1 + 1j], dtype='<c8'), np.arange(2, dtype='u1')]),
    'bigendian': objarr([np.arange(4, dtype='>u2'), np.array(['ab'], dtype='>U2'), np.arange(2, dtype='>f8')]),
    'fortran_arrays': objarr([np.arange(6.).reshape(2, 3).T, np.asfortranarray(np.arange(24, dtype='<i2').reshape(2, 3, 4))]),
    'scalars': objarr([np.float64(1.5), np.int32(-2), np.str_('x'), np.bool_(True), np.uint8(7), np.float32(0.25)]),
    'datetimes': objarr([np.array(['2020-01-01', '2021-01-01'], dtype='M8[D]'), np.array([1, 2], dtype='m8[10s]'), np.datetime64('2020-01-02T03', 'h')]),
    'many': objarr(['s%d' % i for i in range(2500)]),
    'shared': objarr([shared, shared]),
    'zero_d': zero_d,
    'empty': np.empty((0,), dtype=object),
    'empty2d': np.empty((2, 0), dtype=object),
    'nested_objarr': objarr([objarr(['in', 1]), 5]),
    'bytearray': objarr([bytearray(b'ab'), bytearray()]),
    'datetime': objarr([datetime.date(2020, 1, 2)]),
}
out = {}
for name, a in cases.items():
    for proto in (2, 3, 4, 5):
        p = pickle.dumps(a, protocol=proto)
        out['%s/%d' % (name, proto)] = {'pickle': p.hex(), 'canon': canon(pickle.loads(p))}
json.dump(out, sys.stdout)
`

type pyCase struct {
	Pickle string `json:"pickle"`
	Canon  string `json:"canon"`
}

var (
	pyOnce  sync.Once
	pyOut   map[string]pyCase
	pyError string
)

// numpyCases runs pyCases once for the package's tests.
func numpyCases(t *testing.T) map[string]pyCase {
	t.Helper()
	pypeer.Require(t)
	pyOnce.Do(func() {
		out := pypeer.Run(t, pyCases, nil)
		if err := json.Unmarshal(out, &pyOut); err != nil {
			pyError = err.Error()
		}
	})
	if pyError != "" || pyOut == nil {
		t.Fatal("the numpy cases did not run", pyError)
	}
	return pyOut
}

// TestNumpyPickles reads numpy's pickles of every case with every protocol
// and requires the values numpy's own unpickling gives.
func TestNumpyPickles(t *testing.T) {
	cases := numpyCases(t)
	require.NotEmpty(t, cases)
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			p, err := hex.DecodeString(c.Pickle)
			require.NoError(t, err)
			v, err := Decode(p, Options{})
			if strings.HasPrefix(name, "datetime/") {
				require.ErrorIs(t, err, ErrNotData)
				assert.Contains(t, err.Error(), `global "datetime.date" is not data that is read (datetime objects are not among the types read)`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.Canon, pycanon.Of(v))
		})
	}
}

// TestNumpy2Spelling reads protocol 3 pickles whose globals are spelled as
// numpy 2 spells them (numpy._core), which numpy 1.24 itself cannot load.
func TestNumpy2Spelling(t *testing.T) {
	cases := numpyCases(t)
	for _, name := range []string{"arrays/3", "scalars/3", "nested_objarr/3", "fortran/3"} {
		p, _ := hex.DecodeString(cases[name].Pickle)
		p2 := bytes.ReplaceAll(p, []byte("cnumpy.core."), []byte("cnumpy._core."))
		require.NotEqual(t, p, p2, name)
		v, err := Decode(p2, Options{})
		require.NoError(t, err, name)
		assert.Equal(t, cases[name].Canon, pycanon.Of(v), name)
	}
}

// TestWriteAsNumpy decodes numpy's protocol 3 pickles, the ones np.save
// writes, and requires AppendObjectArray to write each back byte for byte.
// The cases it cannot are those whose reading loses what the bytes said:
// Fortran order and big-endian data (read row-major and native, as numpy
// reads them), a list shared by two elements, bytearray and frozenset,
// datetimes.
func TestWriteAsNumpy(t *testing.T) {
	cases := numpyCases(t)
	for _, name := range []string{"strings", "bytes", "ints", "floats", "none_bool", "nested", "multidim", "tuple_dict",
		"complex", "set", "arrays", "scalars", "many", "zero_d", "empty", "empty2d", "nested_objarr"} {
		t.Run(name, func(t *testing.T) {
			p, _ := hex.DecodeString(cases[name+"/3"].Pickle)
			v, err := Decode(p, Options{})
			require.NoError(t, err)
			a := v.(*ObjectArray)
			out, err := AppendObjectArray(nil, a.Shape, a.Values, EncodeOptions{})
			require.NoError(t, err)
			if !bytes.Equal(p, out) {
				t.Fatalf("np.save's pickle:\n%x\nours:\n%x", p, out)
			}
		})
	}
}
