package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// An .npz holding a member that is not an .npy (a notes.txt, as np.load
// returns it as bytes) converts whole: the arrays go, the other member is
// left out with one warning line; inspect lists it and exits 0.
func TestNPZWithOtherMembers(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	pypeer.Run(t, `
import zipfile
import numpy as np
np.savez(sys.argv[1], a=np.arange(3), b=np.ones((2, 2), dtype='>f4'))
with zipfile.ZipFile(sys.argv[1], "a") as z:
    z.writestr("notes.txt", "taken on the 3rd\n")
`, nil, p("run.npz"))
	for _, out := range []string{"out.npz", "out.msgpack"} {
		r := cli(t, nil, "convert", p("run.npz"), p(out))
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "ndpack: warning: "+p("run.npz")+": a member that is not an .npy file left out (notes.txt): ndpack converts the arrays\n", r.stderr, out)
	}
	r := cli(t, nil, "convert", p("out.msgpack"), p("back.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	same := pypeer.Run(t, `
import numpy as np
a, b, c = (np.load(f) for f in sys.argv[1:])
keys = sorted(k for k in a.files if k != "notes.txt")
print(sorted(b.files) == keys == sorted(c.files) and all(
    np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype and np.array_equal(a[k], c[k]) and a[k].dtype == c[k].dtype for k in keys))
`, nil, p("run.npz"), p("out.npz"), p("back.npz"))
	assert.Equal(t, "True\n", string(same))

	// Picked by name, it is still an error: it is not an array.
	r = cli(t, nil, "convert", p("run.npz")+":notes.txt", p("notes.npy"))
	oneLineError(t, r, `member "notes.txt" is not a NAME.npy file`, "picked")

	r = cli(t, nil, "inspect", p("run.npz"))
	assert.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, p("run.npz")+": npz, 2 arrays and 1 other value\n"), r.stdout)
	assert.Contains(t, r.stdout, "  notes.txt:\n")
}
