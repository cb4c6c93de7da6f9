package mpwire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packHeaders packs each case with msgpack-python and prints, a line each,
// the bytes in front of the value's content (a container's items, a str's
// characters, a bin's or ext's payload), or the whole value for a scalar.
const packHeaders = `
import json, struct, sys
import msgpack

def pack(o):
    return msgpack.packb(o, use_bin_type=True)

for kind, arg in json.load(sys.stdin):
    if kind == "map":
        o, content = {k: None for k in range(arg)}, b"".join(pack(k) + pack(None) for k in range(arg))
    elif kind == "array":
        o, content = [None] * arg, pack(None) * arg
    elif kind == "str":
        o = "a" * arg
        content = o.encode()
    elif kind == "bin":
        o = content = b"\x07" * arg
    elif kind == "ext":
        content = b"\x00" * arg
        o = msgpack.ExtType(110, content)
    elif kind == "int":
        o, content = int(arg), b""
    elif kind == "float":
        o, content = struct.unpack(">d", bytes.fromhex(arg))[0], b""
    else:
        o, content = {"nil": None, "true": True, "false": False}[kind], b""
    b = pack(o)
    assert b.endswith(content), kind
    print(b[:len(b) - len(content)].hex())
`

// TestAppendersMatchMsgpackPython: every appender writes, at every boundary
// of its formats, the bytes msgpack-python 1.0 writes for the same value.
func TestAppendersMatchMsgpackPython(t *testing.T) {
	type pycase struct {
		kind string
		arg  any
		want []byte // what the appender writes
	}
	var cases []pycase
	for _, n := range sizes {
		cases = append(cases,
			pycase{"map", n, AppendMapHeader(nil, n)},
			pycase{"array", n, AppendArrayHeader(nil, n)},
			pycase{"str", n, AppendStringHeader(nil, n)},
			pycase{"bin", n, AppendBinHeader(nil, n)},
			pycase{"ext", n, AppendExtHeader(nil, 110, n)},
		)
	}
	for _, v := range ints {
		cases = append(cases, pycase{"int", strconv.FormatInt(v, 10), AppendInt(nil, v)})
	}
	for _, v := range []uint64{math.MaxInt64 + 1, math.MaxUint64} {
		cases = append(cases, pycase{"int", strconv.FormatUint(v, 10), AppendUint(nil, v)})
	}
	// Python's NaN is the quiet NaN with no payload bits.
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5, -2.25e-300, math.Inf(1), math.MaxFloat64, math.Float64frombits(0x7ff8000000000000)} {
		cases = append(cases, pycase{"float", fmt.Sprintf("%016x", math.Float64bits(f)), AppendFloat64(nil, f)})
	}
	cases = append(cases, pycase{"nil", 0, AppendNil(nil)}, pycase{"true", 0, AppendBool(nil, true)}, pycase{"false", 0, AppendBool(nil, false)})

	var args [][2]any
	for _, c := range cases {
		args = append(args, [2]any{c.kind, c.arg})
	}
	in, err := json.Marshal(args)
	require.NoError(t, err)
	out := pypeer.Run(t, packHeaders, in)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(cases))
	for i, c := range cases {
		py, err := hex.DecodeString(lines[i])
		require.NoError(t, err)
		assert.True(t, bytes.Equal(py, c.want), "%s %v: msgpack-python % x, mpwire % x", c.kind, c.arg, py, c.want)
	}
	// Strings and byte strings append their content after the header.
	assert.Equal(t, []byte("\xa3abc"), AppendString(nil, "abc"))
	assert.Equal(t, []byte("\xa3abc"), AppendStringFromBytes(nil, []byte("abc")))
	assert.Equal(t, []byte("\xc4\x03abc"), AppendBytes(nil, []byte("abc")))
}
