package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// Every way of naming a dtype that a user types for numpy gives the dtype
// np.dtype gives: its typestr for plain ones, str(dtype) for records.
func TestDTypeSpecsAreNumpys(t *testing.T) {
	specs := []string{"float64", "f8", "<f8", ">f8", "=f8", "double", "float", "d", "float32", "f4", "single", "half", "float16", "e",
		"int8", "i1", "b", "byte", "uint8", "u1", "B", "ubyte", "int16", ">i2", "<i2", "short", "h", "uint16", "H",
		"int32", "i4", "intc", "i", "uint32", "I", "int64", "int", "long", "intp", "l", "q", "i8", "uint64", "uint", "Q", "u8",
		"complex64", "c8", "F", "csingle", "complex128", "complex", "c16", "D", ">c16",
		"bool", "?", "b1", "|b1", "bool_",
		"S10", "|S10", "a3", "U5", "<U5", ">U5", "V8", "|V8",
		"M8[ns]", "<M8[ns]", "datetime64[ns]", "datetime64[D]", "m8[s]", "timedelta64[ms]", ">M8[us]",
		"[('x', '<f4'), ('y', '<f4'), ('id', '<u2')]",
		"[('pos', '<f4', (3,)), ('name', 'S4'), ('t', '>f8')]",
		"[('a', [('b', '<i2'), ('c', 'u1')]), ('d', '<f8', (2, 2))]"}
	records := map[string]string{
		"x:<f4,y:<f4,id:<u2":        "[('x', '<f4'), ('y', '<f4'), ('id', '<u2')]",
		"pos:f4(3), name:S4, t:>f8": "[('pos', '<f4', (3,)), ('name', 'S4'), ('t', '>f8')]",
		"x:float64,flag:bool":       "[('x', '<f8'), ('flag', '?')]",
	}
	var script strings.Builder
	script.WriteString("import numpy as np, json\nout = []\nfor s in json.loads(sys.argv[1]):\n    d = np.dtype(eval(s) if s.startswith('[') else s)\n    out.append(d.str if d.names is None else str(d))\nprint(json.dumps(out))\n")
	all := append([]string{}, specs...)
	for _, list := range records {
		all = append(all, list)
	}
	in, _ := json.Marshal(all)
	var want []string
	require.NoError(t, json.Unmarshal(pypeer.Run(t, script.String(), nil, string(in)), &want))
	for i, s := range all {
		dt, err := parseDTypeSpec(s)
		require.NoError(t, err, s)
		assert.Equal(t, want[i], dt.String(), s)
	}
	for spec, list := range records {
		a, err := parseDTypeSpec(spec)
		require.NoError(t, err, spec)
		b, err := parseDTypeSpec(list)
		require.NoError(t, err, list)
		assert.Equal(t, b, a, "%s is %s", spec, list)
	}
	for _, bad := range []string{"", "float65", "str3", "bytes5", "void4", "x:", ":f8", "[('x')]", "[('x', 'f8'", "numbers", "i3", "x:<f4(3"} {
		_, err := parseDTypeSpec(bad)
		assert.Error(t, err, bad)
	}
}
