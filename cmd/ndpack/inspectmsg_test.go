package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// inspectMsgJSON runs inspect --json with args and returns its one file's
// list of arrays, decoded.
func inspectMsgJSON(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	r := cli(t, nil, append([]string{"inspect", "--json"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	var files []struct {
		Arrays []map[string]any `json:"arrays"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &files), r.stdout)
	require.Len(t, files, 1)
	return files[0].Arrays
}

// A message that holds no array (an RPC request) is shown by its values,
// as jq -c prints them, nothing HTML-escaped; in JSON as JSON values, with
// no error and no array fields (#43).
func TestInspectMessageWithoutArrays(t *testing.T) {
	in := filepath.Join(t.TempDir(), "rpc.msgpack")
	pypeer.Run(t, pypeer.Helpers+`
open(sys.argv[1], "wb").write(msgpack.packb({"method": "measure", "params": {"x": [1, 2], "s": "<a>"}, "id": 7}))
`, nil, in)
	want := in + `: msgpack, 0 arrays and 3 other values
  method:
    value     "measure"
  params:
    value     {"x":[1,2],"s":"<a>"}
  id:
    value     7
`
	for _, args := range [][]string{{"inspect", in}, {"inspect", "--header", in}} {
		r := cli(t, nil, args...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, want, r.stdout, args)
		assert.Empty(t, r.stderr)
	}
	assert.Equal(t, []map[string]any{
		{"name": "method", "value": "measure"},
		{"name": "params", "value": map[string]any{"x": []any{1.0, 2.0}, "s": "<a>"}},
		{"name": "id", "value": 7.0},
	}, inspectMsgJSON(t, in))
	r := cli(t, nil, "inspect", "--json", in)
	assert.Contains(t, r.stdout, `"s": "<a>"`) // not \u003ca\u003e
	assert.NotContains(t, r.stdout, `"error"`)

	// A list, or one value, is the file's one member.
	for doc, want := range map[string]string{
		`[1, "a<b", {"k": None}]`: `[1,"a<b",{"k":null}]`,
		`2.5`:                     `2.5`,
	} {
		one := filepath.Join(t.TempDir(), "one.msgpack")
		pypeer.Run(t, pypeer.Helpers+"open(sys.argv[1], 'wb').write(msgpack.packb("+doc+"))\n", nil, one)
		r := cli(t, nil, "inspect", one)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, one+": msgpack, 0 arrays and 1 other value\n  value     "+want+"\n", r.stdout)
	}
}

// The arrays of msgpack-numpy's and OpenPI's maps inside a list or map
// are shown in its value as ext 110's are, by a placeholder, and are
// still listed as arrays by their paths; --header shows no first values.
func TestInspectDialectArraysInValues(t *testing.T) {
	in := filepath.Join(t.TempDir(), "mixed.msgpack")
	pypeer.Run(t, pypeer.Helpers+`
import msgpack_numpy
a = np.arange(3)
openpi = {b"__ndarray__": True, b"data": a.tobytes(), b"dtype": a.dtype.str, b"shape": a.shape}
m = {"list": [msgpack_numpy.encode(a), 5, "x<y"], "obs": {"state": openpi}, "id": 7}
open(sys.argv[1], "wb").write(msgpack.packb(m))
`, nil, in)
	r := cli(t, nil, "inspect", in)
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		"  list:\n    value     [<msgpack-numpy array, 65 bytes>,5,\"x<y\"]\n",
		"  obs:\n    value     {\"state\":<openpi array, 67 bytes>}\n",
		"  id:\n    value     7\n",
		"  list/0:\n    dtype     <i8 (int, 8 bytes each, byte order little)\n    shape     (3,): 3 elements, 24 bytes\n    min, max  0, 2\n    mean      1\n    first     [0 1 2]\n",
		"  obs/state:\n    dtype     <i8 (int, 8 bytes each, byte order little)\n",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.NotContains(t, r.stdout, `\u00`)

	arrays := inspectMsgJSON(t, in)
	require.Len(t, arrays, 5)
	assert.Equal(t, map[string]any{"name": "list", "value": []any{"<msgpack-numpy array, 65 bytes>", 5.0, "x<y"}}, arrays[0])
	assert.Equal(t, map[string]any{"name": "obs", "value": map[string]any{"state": "<openpi array, 67 bytes>"}}, arrays[1])
	assert.Equal(t, []any{0.0, 1.0, 2.0}, arrays[3]["first"])

	// --header: no data read, so no first values, in text or JSON.
	r = cli(t, nil, "inspect", "--header", in)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  list/0:\n    dtype     <i8 (int, 8 bytes each, byte order little)\n    shape     (3,): 3 elements, 24 bytes\n  obs/state:\n")
	assert.NotContains(t, r.stdout, "first")
	arrays = inspectMsgJSON(t, "--header", in)
	require.Len(t, arrays, 5)
	assert.Equal(t, map[string]any{"name": "list/0", "dtype": "<i8", "kind": "int", "standard": true, "byte_order": "little",
		"shape": []any{3.0}, "elements": 3.0, "item_size": 8.0, "bytes": 24.0}, arrays[3])
}

// A long value is cut: in text past 72 characters with "...", in JSON
// where JSON allows (a string ends with "...", a list ends early), marked
// value_truncated, and still a JSON value.
func TestInspectLongValues(t *testing.T) {
	in := filepath.Join(t.TempDir(), "long.msgpack")
	pypeer.Run(t, pypeer.Helpers+`
open(sys.argv[1], "wb").write(msgpack.packb({"s": "x" * 500, "l": list(range(300)), "f": float("nan"), "b": b"abc"}))
`, nil, in)
	r := cli(t, nil, "inspect", in)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  s:\n    value     \""+strings.Repeat("x", 71)+"...\n")
	assert.Contains(t, r.stdout, "  f:\n    value     NaN\n  b:\n    value     <3 bytes>\n")
	arrays := inspectMsgJSON(t, in)
	require.Len(t, arrays, 4)
	assert.Equal(t, map[string]any{"name": "s", "value": strings.Repeat("x", 200) + "...", "value_truncated": true}, arrays[0])
	l := arrays[1]["value"].([]any)
	assert.Equal(t, true, arrays[1]["value_truncated"])
	require.Less(t, len(l), 300)
	for i, v := range l {
		assert.Equal(t, float64(i), v)
	}
	assert.Equal(t, map[string]any{"name": "f", "value": "NaN"}, arrays[2])
	assert.Equal(t, map[string]any{"name": "b", "value": "<3 bytes>"}, arrays[3])
}
