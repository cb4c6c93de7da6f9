package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// inspect prints a message's values that are not arrays by their value,
// as jq -c would, instead of "not read ... not an array".
func TestInspectPrintsOtherValues(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.msgpack")
	pypeer.Run(t, pypeer.Helpers+`
import msgpack_numpy
m = {"x": 1, "name": "foo", "arr": np.arange(3), "l": [1, "a", None, -2.5, True], "d": {"a": 2.5, "k": b"xyz"}, "long": "w" * 100}
open(sys.argv[1], "wb").write(msgpack.packb(m, default=msgpack_numpy.encode))
`, nil, in)
	r := cli(t, nil, "inspect", in)
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		"  x:\n    value     1\n",
		"  name:\n    value     \"foo\"\n",
		"  l:\n    value     [1,\"a\",null,-2.5,true]\n",
		"  d:\n    value     {\"a\":2.5,\"k\":<3 bytes>}\n",
		"  long:\n    value     \"" + strings.Repeat("w", 71) + "...\n",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.NotContains(t, r.stdout, "not read")
	assert.Contains(t, r.stdout, "1 array and 5 other values")
}
