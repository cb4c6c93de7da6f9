package ndpack_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// gr00tPacker writes, for every .npy path given on stdin (one a line),
// three messages as GR00T's MsgSerializer.to_bytes packs them
// (msgpack.packb with its default hook, which puts np.save's bytes in the
// map): the file's own bytes as as_npy (raw), np.save of np.load of it
// (saved: Fortran order kept), and np.save of its C-ordered copy (c), each
// in a map {"x": array, "n": 7}; or "refused" where np.load refuses it
// with allow_pickle=False, as GR00T's decoder loads.
const gr00tPacker = `
import io, os, sys
import numpy as np
import msgpack

def enc(obj):
    if isinstance(obj, np.ndarray):
        b = io.BytesIO()
        np.save(b, obj, allow_pickle=False)
        return {"__ndarray_class__": True, "as_npy": b.getvalue()}
    return obj

out = sys.argv[1]
for i, path in enumerate(sys.stdin.read().split("\n")):
    if not path:
        continue
    raw = open(path, "rb").read()
    try:
        a = np.load(io.BytesIO(raw), allow_pickle=False)
    except Exception:
        with open(os.path.join(out, "%d.refused" % i), "wb") as f:
            f.write(msgpack.packb({"n": 7, "x": {"__ndarray_class__": True, "as_npy": raw}}))
        continue
    c = a if a.flags.c_contiguous else a.copy(order="C")
    for name, v in (("raw", {"__ndarray_class__": True, "as_npy": raw}), ("saved", a), ("c", c)):
        with open(os.path.join(out, "%d.%s" % (i, name)), "wb") as f:
            f.write(msgpack.packb({"n": 7, "x": v}, default=enc))
`

// TestGR00TMessagesFromCorpus: for every .npy of the external corpus,
// GR00T's map as MsgSerializer packs it (the file itself, np.save of
// what np.load read, np.save of it in C order) decodes to the array
// npybridge reads from the file, and MarshalMessage writes the C-ordered
// message byte for byte as MsgSerializer does. What np.load refuses
// without pickles, ndpack refuses too.
func TestGR00TMessagesFromCorpus(t *testing.T) {
	const externalDir = "../shared/corpus/external"
	raw := sharedfiles.ReadFile(t, filepath.Join(externalDir, "expected.json"))
	var expected map[string]struct {
		Kind string `json:"kind"`
	}
	require.NoError(t, json.Unmarshal(raw, &expected))
	var paths []string
	for name, v := range expected {
		if v.Kind == "npy" {
			paths = append(paths, name)
		}
	}
	sort.Strings(paths)
	require.Greater(t, len(paths), 200)
	out := t.TempDir()
	var list strings.Builder
	for _, p := range paths {
		list.WriteString(filepath.Join(externalDir, p) + "\n")
	}
	pypeer.Run(t, gr00tPacker, []byte(list.String()), out)
	gr00t := ndpack.MessageOptions{Encoding: dialect.GR00T}
	counts := map[string]int{}
	for i, p := range paths {
		base := filepath.Join(out, strconv.Itoa(i))
		if _, err := os.Stat(base + ".refused"); err == nil {
			counts["refused"]++
			var m map[string]any
			if err := (ndpack.MessageOptions{}).UnmarshalMessage(msgFile(t, base, "refused"), &m); err == nil {
				t.Errorf("%s: np.load refuses it, ndpack read %v", p, m["x"])
			}
			continue
		}
		want, err := npybridge.ReadFile(filepath.Join(externalDir, p))
		if err != nil {
			t.Errorf("%s: numpy reads it, npybridge does not: %v", p, err)
			continue
		}
		for _, kind := range []string{"raw", "saved", "c"} {
			b := msgFile(t, base, kind)
			var m map[string]any
			if err := (ndpack.MessageOptions{}).UnmarshalMessage(b, &m); err != nil {
				t.Errorf("%s (%s): %v", p, kind, err)
				continue
			}
			got, ok := m["x"].(*ndarray.Array)
			if !ok || !got.Equal(want) || m["n"] != int8(7) && m["n"] != int64(7) && m["n"] != uint8(7) {
				t.Errorf("%s (%s): decoded %v, want %v and n 7", p, kind, m["x"], want)
			}
		}
		b, err := gr00t.MarshalMessage(map[string]any{"x": want, "n": 7})
		require.NoError(t, err, p)
		assert.Equal(t, msgFile(t, base, "c"), b, "%s: MarshalMessage as MsgSerializer packs it", p)
		counts["read"]++
	}
	t.Logf("%v", counts)
	assert.Greater(t, counts["read"], 200)
	assert.Greater(t, counts["refused"], 0)
}

// TestGR00TRefusals: what np.load refuses with allow_pickle=False, or
// what lies about its size, is an error of its class, never a value.
func TestGR00TRefusals(t *testing.T) {
	a, _ := ndarray.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	b, err := ndpack.MessageOptions{Encoding: dialect.GR00T}.MarshalMessage(map[string]any{"x": a})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(b, &m))
	assert.True(t, a.Equal(m["x"].(*ndarray.Array)))
	for _, tc := range []struct {
		name string
		edit func(string) string
		is   error
		says string
	}{
		{"object", func(s string) string { return strings.Replace(s, "'<f8'", "'|O' ", 1) }, npybridge.ErrObjectArray, "object"},
		{"claims more", func(s string) string { return strings.Replace(s, "(2, 2)", "(2, 9)", 1) }, ndarray.ErrTruncated, "as_npy holds 32 bytes"},
		{"not npy", func(s string) string { return strings.Replace(s, "\x93NUMPY", "PK\x03\x04xx", 1) }, npybridge.ErrNotNPY, "magic"},
		{"no as_npy", func(s string) string { return strings.Replace(s, "as_npy", "as_npz", 1) }, ndarray.ErrMalformed, "without the key \"as_npy\""},
	} {
		var m map[string]any
		err := ndpack.MessageOptions{}.UnmarshalMessage([]byte(tc.edit(string(b))), &m)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// dialect's own functions say where GR00T's maps are read and written.
	_, _, err = dialect.Unmarshal(b[3:])
	assert.ErrorIs(t, err, dialect.ErrUnsupported)
	_, err = dialect.GR00T.Marshal(a)
	assert.ErrorIs(t, err, dialect.ErrUnsupported)
	assert.Contains(t, err.Error(), "package ndpack")
}

// msgFile reads one of gr00tPacker's messages.
func msgFile(t *testing.T, base, kind string) []byte {
	t.Helper()
	b, err := os.ReadFile(base + "." + kind)
	require.NoError(t, err)
	return b
}
