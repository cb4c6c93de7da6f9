package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// --astype of NaN, infinities and out-of-range floats to integers gives
// numpy's values (INT_MIN for int32 on x86-64), and says once on stderr
// what numpy warns of ("invalid value encountered in cast"), however many
// elements and members gave it; a conversion numpy does not warn of says
// nothing.
func TestConvertAstypeWarnsAsNumpy(t *testing.T) {
	dir := t.TempDir()
	out := pypeer.Run(t, `
import numpy as np, os, json, warnings
d = sys.argv[1]
a = np.array([np.nan, np.inf, -np.inf, 1e20, 300.0, -2.5, 7.0] * 3)
np.save(os.path.join(d, "a.npy"), a)
np.savez(os.path.join(d, "z.npz"), x=a, y=a[::-1].copy())
np.save(os.path.join(d, "big.npy"), np.array([1e300, 1.5, -1e39]))
np.save(os.path.join(d, "c.npy"), np.array([1 + 2j, 3 - 4j]))
res = {}
for name, arr, to in [("a", a, "int32"), ("a8", a, "uint8"), ("big", np.load(os.path.join(d, "big.npy")), "float32"), ("c", np.load(os.path.join(d, "c.npy")), "float64")]:
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        y = arr.astype(to)
    res[name] = {"bytes": y.tobytes().hex(), "warnings": sorted(set(str(w.message) for w in ws))}
print(json.dumps(res))
`, nil, dir)
	var want map[string]struct {
		Bytes    string
		Warnings []string
	}
	require.NoError(t, json.Unmarshal(out, &want))
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, c := range []struct{ name, in, to string }{{"a", "a.npy", "int32"}, {"a8", "a.npy", "uint8"}, {"big", "big.npy", "float32"}, {"c", "c.npy", "float64"}} {
		outFile := p(c.name + "-out.npy")
		r := cli(t, nil, "convert", "--casting", "unsafe", "--astype", c.to, p(c.in), outFile)
		require.Equal(t, 0, r.code, r.stderr)
		b, err := os.ReadFile(outFile)
		require.NoError(t, err)
		assert.Equal(t, want[c.name].Bytes, hexTail(b, len(want[c.name].Bytes)/2), "%s as %s: numpy's values", c.in, c.to)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		require.Len(t, lines, len(want[c.name].Warnings), "one line a warning numpy gives: %q", r.stderr)
		for i, w := range want[c.name].Warnings {
			assert.True(t, strings.HasPrefix(lines[i], "ndpack: warning: "+p(c.in)+": "+strings.ToLower(w[:1])+w[1:]+" ("), "%q, numpy: %q", lines[i], w)
		}
	}
	r := cli(t, nil, "convert", "--casting", "unsafe", "--astype", "int32", p("z.npz"), p("z32.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "ndpack: warning: "+p("z.npz")+": invalid value encountered in cast (<f8 to <i4: NaN, infinity or out of range), as numpy warns\n", r.stderr, "once for the whole conversion")
	r = cli(t, nil, "convert", "--astype", "float32", p("a.npy"), p("a32.npy"))
	assert.Equal(t, 0, r.code)
	assert.Empty(t, r.stderr, "NaN and infinities are floats; numpy warns of nothing")
}

// hexTail is the last n bytes of b in hex: an .npy file's data.
func hexTail(b []byte, n int) string { return hex.EncodeToString(b[len(b)-n:]) }
