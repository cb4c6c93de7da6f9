package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// numpy's string scalars in an object array (np.str_, np.bytes_, as
// a.tolist() does not make them but np.array(..., dtype=object) of numpy
// values does) convert as the str and bytes they are, not as <U and |S
// arrays that ext 110 refuses.
func TestObjectArrayNumpyStrings(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, pypeer.Helpers+`
import os
d = sys.argv[1]
a = np.empty(5, dtype=object)
a[:] = [np.str_("hi"), np.bytes_(b"yo"), np.str_("\u00e9\u2603\U0001f600"), [np.str_("in"), 2], np.array(["x", "yz"])[1]]
np.save(os.path.join(d, "s.npy"), a)
`, nil, dir)
	r := cli(t, nil, "inspect", "--objects", filepath.Join(dir, "s.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  first     ['hi', b'yo', '\u00e9\u2603\U0001f600', ['in', 2], 'yz']\n")

	out := filepath.Join(dir, "s.msgpack")
	r = cli(t, nil, "convert", "--objects", filepath.Join(dir, "s.npy"), out)
	require.Equal(t, 0, r.code, r.stderr)
	got := pypeer.Run(t, pypeer.Helpers+`
print(repr(msgpack.unpackb(open(sys.argv[1], "rb").read())))
`, nil, out)
	assert.Equal(t, "['hi', b'yo', '\u00e9\u2603\U0001f600', ['in', 2], 'yz']\n", string(got))
}
