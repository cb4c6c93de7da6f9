package npybridge

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// npyCase is one array: its dtype and shape, and for numpy-written files
// whether numpy stored it in Fortran order and in which format version.
type npyCase struct {
	File    string `json:"file"`
	Typestr string `json:"typestr"`
	Shape   []int  `json:"shape"`
	Fortran bool   `json:"fortran"`
	Version []int  `json:"version"`
}

// npyTypestrs is every dtype ndarray holds, in both byte orders where the
// order matters.
func npyTypestrs() []string {
	var out []string
	for _, k := range []string{"b1", "i1", "u1", "S3", "V5"} {
		out = append(out, "|"+k)
	}
	for _, k := range []string{"i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "f16", "c8", "c16", "c32", "U3", "M8[ns]", "M8[D]", "m8[s]", "M8"} {
		out = append(out, "<"+k, ">"+k)
	}
	return out
}

var npyShapes = [][]int{{}, {0}, {1}, {7}, {3, 4}, {2, 0, 3}, {2, 3, 4}, {1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 1, 2, 1, 1, 1, 3}}

const npyPyHelpers = pypeer.Helpers + `
import json, os
from numpy.lib import format as npf

def header_of(path):
    with open(path, 'rb') as f:
        version = npf.read_magic(f)
        shape, fortran, dtype = npf._read_array_header(f, version)
    return list(version), fortran
`

// TestNumpyWritesWeRead: np.save (C and Fortran order) and write_array with
// versions 2.0 and 3.0 write; Read must give the same dtype, shape and
// values, compared through little-endian row-major bytes numpy wrote beside.
func TestNumpyWritesWeRead(t *testing.T) {
	dir := t.TempDir()
	var cases []npyCase
	for _, ts := range npyTypestrs() {
		for _, s := range npyShapes {
			cases = append(cases, npyCase{Typestr: ts, Shape: s})
		}
	}
	in, _ := json.Marshal(cases)
	out := pypeer.Run(t, npyPyHelpers+`
rng = np.random.default_rng(3)
d = sys.argv[1]
res = []
for i, c in enumerate(json.load(sys.stdin)):
    arr = random_array(rng, c["typestr"], c["shape"])
    variants = [("c", arr, None), ("f", np.asfortranarray(arr), None)]
    if i % 3 == 0:
        variants += [("v2", arr, (2, 0)), ("v3", arr, (3, 0))]
    for tag, a, version in variants:
        name = "%d-%s.npy" % (i, tag)
        path = os.path.join(d, name)
        if version is None:
            np.save(path, a)
        else:
            with open(path, 'wb') as f:
                npf.write_array(f, a, version=version)
        with open(path + ".le", 'wb') as f:
            f.write(little_endian_bytes(a))
        v, fortran = header_of(path)
        res.append({"file": name, "typestr": a.dtype.str, "shape": list(a.shape), "fortran": fortran, "version": v})
print(json.dumps(res))
`, in, dir)
	var files []npyCase
	require.NoError(t, json.Unmarshal(out, &files))
	fortran := 0
	for _, c := range files {
		t.Run(c.File+"/"+c.Typestr+fmt.Sprint(c.Shape), func(t *testing.T) {
			path := filepath.Join(dir, c.File)
			a, err := ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, c.Typestr, a.DType.String())
			assert.Equal(t, c.Shape, a.Shape)
			le, err := a.ToOrder('<')
			require.NoError(t, err)
			want, err := os.ReadFile(path + ".le")
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, le.Data), "values differ")

			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			h, err := ReadOptions{}.ReadHeader(f)
			require.NoError(t, err)
			assert.Equal(t, c.Fortran, h.FortranOrder)
			assert.Equal(t, c.Version, []int{h.Major, h.Minor})
		})
		if c.Fortran {
			fortran++
		}
	}
	assert.Greater(t, fortran, 100, "the Fortran cases must really be Fortran-ordered files")
}

// TestWeWriteNumpyReads: Write's bytes equal np.save of the array numpy
// loads from them, and the loaded values equal ours.
func TestWeWriteNumpyReads(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var cases []npyCase
	for i, ts := range npyTypestrs() {
		for j, s := range npyShapes {
			dt := ndarray.MustParseDType(ts)
			n, _ := ndarray.ByteSize(dt, s)
			data := make([]byte, n)
			for k := range data {
				data[k] = byte(rng.Uint32())
				if dt.Kind == 'b' {
					data[k] &= 1
				}
			}
			a, err := ndarray.New(dt, s, data)
			require.NoError(t, err)
			name := fmt.Sprintf("%d-%d.npy", i, j)
			require.NoError(t, WriteFile(filepath.Join(dir, name), a))
			le, _ := a.ToOrder('<')
			require.NoError(t, os.WriteFile(filepath.Join(dir, name+".le"), le.Data, 0o644))
			cases = append(cases, npyCase{File: name, Typestr: ts, Shape: s})
		}
	}
	in, _ := json.Marshal(cases)
	out := pypeer.Run(t, npyPyHelpers+`
import io
d = sys.argv[1]
failures = []
cases = json.load(sys.stdin)
for c in cases:
    path = os.path.join(d, c["file"])
    name = c["file"] + " " + c["typestr"] + str(c["shape"])
    a = np.load(path)
    if a.dtype.str != c["typestr"] or list(a.shape) != c["shape"]:
        failures.append(name + ": numpy read " + a.dtype.str + str(a.shape))
        continue
    with open(path + ".le", 'rb') as f:
        if little_endian_bytes(a) != f.read():
            failures.append(name + ": values differ")
    buf = io.BytesIO()
    np.save(buf, a)
    with open(path, 'rb') as f:
        ours = f.read()
    if buf.getvalue() != ours:
        failures.append(name + ": bytes differ from np.save: %r vs %r" % (ours[:128], buf.getvalue()[:128]))
print(json.dumps({"checked": len(cases), "failures": failures}))
`, in, dir)
	var res struct {
		Checked  int
		Failures []string
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	assert.Equal(t, len(cases), res.Checked)
	assert.Empty(t, res.Failures)
}

// TestHeaderVersionSwitch checks the choice between 1.0 and 2.0, and the
// padding, against numpy's own header wrapper for header texts around the
// 65535-byte limit (reached only with thousands of dimensions, which numpy
// arrays cannot have, so the wrapper is called directly).
func TestHeaderVersionSwitch(t *testing.T) {
	var dims []int
	var texts []string
	for _, n := range []int{21700, 21780, 21790, 21800, 21830, 30000} {
		shape := make([]int, n)
		for i := range shape {
			shape[i] = 1
		}
		b := AppendHeader(nil, ndarray.DTypeOf[float64](), shape)
		dims = append(dims, n)
		texts = append(texts, string(b))
	}
	in, _ := json.Marshal(dims)
	out := pypeer.Run(t, `
import json, warnings
from numpy.lib import format as npf
warnings.simplefilter("ignore")
res = []
for n in json.load(sys.stdin):
    d = {"descr": "<f8", "fortran_order": False, "shape": (1,) * n}
    header = ["{"]
    for key, value in sorted(d.items()):
        header.append("'%s': %s, " % (key, repr(value)))
    header.append("}")
    header = "".join(header) + " " * (npf.GROWTH_AXIS_MAX_DIGITS - 1)
    res.append(npf._wrap_header_guess_version(header).hex())
print(json.dumps(res))
`, in)
	var want []string
	require.NoError(t, json.Unmarshal(out, &want))
	require.Len(t, want, len(texts))
	versions := map[byte]int{}
	for i := range texts {
		assert.True(t, want[i] == hex.EncodeToString([]byte(texts[i])), "%d dims: header differs from numpy's", dims[i])
		versions[texts[i][6]]++
	}
	assert.Equal(t, map[byte]int{1: 4, 2: 2}, versions, "both versions are exercised")
}

// Where numpy draws the line, ndpack draws it: zero-size void items are
// read and written as np.save writes them; more than 32 dimensions, and
// shapes whose non-zero dimensions overflow, numpy refuses to load, so
// ndpack refuses them reading and writing.
func TestNumpyLimits(t *testing.T) {
	refused := map[string][]byte{
		"33 dims":  npyWith(1, "{'descr': '<f8', 'fortran_order': False, 'shape': ("+strings.Repeat("1, ", 33)+"), }\n", make([]byte, 8)),
		"overflow": npyWith(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 0), }\n", nil),
	}
	var files []string
	for _, name := range []string{"33 dims", "overflow"} {
		files = append(files, hex.EncodeToString(refused[name]))
	}
	in, _ := json.Marshal(files)
	out := pypeer.Run(t, `
import io, json
import numpy as np
res = []
for h in json.load(sys.stdin):
    try:
        np.load(io.BytesIO(bytes.fromhex(h)))
        res.append("loaded")
    except ValueError as e:
        res.append("refused")
f = io.BytesIO()
np.save(f, np.zeros(3, "V"))
res.append(f.getvalue().hex())
print(json.dumps(res))
`, in)
	var res []string
	require.NoError(t, json.Unmarshal(out, &res))
	assert.Equal(t, []string{"refused", "refused"}, res[:2], "numpy's verdicts")
	for name, b := range refused {
		_, err := Read(bytes.NewReader(b))
		assert.ErrorIs(t, err, ndarray.ErrShape, name)
	}

	v0, _ := hex.DecodeString(res[2])
	a, err := Read(bytes.NewReader(v0))
	require.NoError(t, err)
	assert.Equal(t, "|V0 (3,)", a.String())
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, a))
	assert.Equal(t, v0, buf.Bytes(), "|V0 written as np.save writes it")

	deep := &ndarray.Array{DType: ndarray.DTypeOf[uint8](), Shape: make([]int, 33), Data: nil}
	assert.ErrorIs(t, Write(io.Discard, deep), ndarray.ErrShape)
	huge := &ndarray.Array{DType: ndarray.DTypeOf[float64](), Shape: []int{1 << 62, 0}, Data: nil}
	assert.ErrorIs(t, Write(io.Discard, huge), ndarray.ErrShape)
}
