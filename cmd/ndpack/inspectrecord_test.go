package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A record file's fields are listed with their dtypes and offsets, nested
// records indented under theirs, each field with numpy's statistics of its
// values over all records (a subarray's elements all counted), in any
// storage order.
func TestInspectRecordsAgainstNumpy(t *testing.T) {
	dir := t.TempDir()
	out := pypeer.Run(t, `
import json, os
import numpy as np
d = sys.argv[1]
dt = np.dtype([("x", "<f4"), ("pos", ">f8", (3,)), ("inner", [("a", "<i4"), ("b", "u1")]),
               (("Title", "t"), "<i2"), ("name", "S4")], align=True)
a = np.zeros((2, 3), dt)
a["x"] = np.arange(6).reshape(2, 3) * 1.5
a["x"][1, 2] = np.nan
a["pos"] = np.arange(18).reshape(2, 3, 3) - 4
a["inner"]["a"] = [[-1, 5, 7], [9, 2**31 - 1, -2**31]]
a["inner"]["b"] = 200
a["t"] = 3
np.save(os.path.join(d, "rec.npy"), a)
np.save(os.path.join(d, "recf.npy"), np.asfortranarray(a))
x = a["x"].astype("f8")
res = {"x": [float(np.nanmin(x)), float(np.nanmax(x)), float(np.nanmean(x)), int(np.isnan(x).sum())],
       "pos": [float(a["pos"].min()), float(a["pos"].max()), float(a["pos"].mean())],
       "a": [int(a["inner"]["a"].min()), int(a["inner"]["a"].max()), float(a["inner"]["a"].mean())],
       "offsets": [dt.fields[n][1] for n in dt.names], "itemsize": dt.itemsize}
print(json.dumps(res))
`, nil, dir)
	var want struct {
		X, Pos, A []float64
		Offsets   []int
		Itemsize  int
	}
	require.NoError(t, json.Unmarshal(out, &want))
	for _, name := range []string{"rec.npy", "recf.npy"} {
		rep, r := inspectJSON(t, nil, filepath.Join(dir, name))
		require.Equal(t, 0, r.code, r.stderr)
		a := rep[0]["arrays"].([]any)[0].(map[string]any)
		assert.Equal(t, "record", a["kind"])
		assert.Equal(t, float64(want.Itemsize), a["item_size"])
		fields := a["fields"].([]any)
		require.Len(t, fields, 5)
		var offsets []int
		for _, f := range fields {
			offsets = append(offsets, int(f.(map[string]any)["offset"].(float64)))
		}
		assert.Equal(t, want.Offsets, offsets, name)
		stats := func(f any) map[string]any { return f.(map[string]any)["stats"].(map[string]any) }
		x := stats(fields[0])
		assert.Equal(t, []any{want.X[0], want.X[1], want.X[3]}, []any{x["min"], x["max"], x["nan_count"]}, name)
		assert.InEpsilon(t, want.X[2], x["nanmean"], 1e-12)
		pos := stats(fields[1])
		assert.Equal(t, []any{want.Pos[0], want.Pos[1]}, []any{pos["min"], pos["max"]}, name)
		assert.InEpsilon(t, want.Pos[2], pos["mean"], 1e-12)
		inner := fields[2].(map[string]any)
		assert.Equal(t, "record", inner["dtype"])
		ia := stats(inner["fields"].([]any)[0])
		assert.Equal(t, []any{want.A[0], want.A[1]}, []any{ia["min"], ia["max"]}, name)
		assert.InEpsilon(t, want.A[2], ia["mean"], 1e-12)
		assert.Equal(t, "Title", fields[3].(map[string]any)["title"])
		assert.Nil(t, fields[4].(map[string]any)["stats"], "bytes have no statistics")
	}
	r := cli(t, nil, "inspect", filepath.Join(dir, "rec.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  shape     (2, 3): 6 elements, 288 bytes\n  fields\n    x         <f4 at byte 0\n      min, max  0, 6\n")
	assert.Contains(t, r.stdout, "    inner     record at byte 32\n      a         <i4 at byte 0\n        min, max  -2147483648, 2147483647\n")
	assert.Contains(t, r.stdout, "    t (title \"Title\") <i2 at byte 40\n")
}
