package ndarray

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// castSpecs are dtypes of every kind ndpack holds, for the casting table:
// numbers in both byte orders, strings and voids of several sizes (0, the
// flexible kind, included), datetimes and timedeltas of many units,
// records that differ in names, titles, layout and field types, and
// subarrays.
func castSpecs() []string {
	var c []string
	for _, t := range []string{"b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "f16", "c8", "c16", "c32"} {
		c = append(c, "<"+t)
		if t[1] != '1' {
			c = append(c, ">"+t)
		}
	}
	for _, n := range []string{"0", "1", "3", "4", "5", "6", "8", "10", "11", "12", "20", "21", "32", "48", "64", "96"} {
		c = append(c, "S"+n, "<U"+n, ">U"+n)
	}
	for _, n := range []string{"0", "1", "3", "4", "8", "12", "16"} {
		c = append(c, "V"+n)
	}
	for _, k := range []string{"M8", "m8"} {
		for _, u := range []string{"", "[Y]", "[M]", "[W]", "[D]", "[h]", "[m]", "[s]", "[ms]", "[us]", "[ns]", "[ps]", "[fs]", "[as]",
			"[10s]", "[2ms]", "[7D]", "[3M]", "[12M]", "[2Y]", "[60m]", "[1000ms]", "[2147483647ns]",
			"[2s]", "[2000ms]", "[2001ms]", "[1000us]", "[1000000us]", "[1000000000ns]", "[1000000000ps]", "[24h]", "[1440m]", "[generic]"} {
			c = append(c, "<"+k+u)
		}
		c = append(c, ">"+k+"[s]", ">"+k)
	}
	return append(c,
		"[('a', '<i4'), ('b', '<f8')]", "[('a', '>i4'), ('b', '>f8')]", "[('a', '<i8'), ('b', '<f8')]",
		"[('x', '<i4'), ('y', '<f8')]", "[('a', '<i4')]", "[('a', '<i2'), ('b', '<f8')]", "[('b', '<f8'), ('a', '<i4')]",
		"{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [0, 8], 'itemsize': 16}",
		"{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [4, 8], 'itemsize': 16}",
		"{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [0, 4], 'itemsize': 16}",
		"{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'titles': ['A', None]}", "[(('A', 'a'), '<i4'), ('b', '<f8')]",
		"[('a', '<f8')]", "[('a', '<i4', (2,))]", "[('a', '>i4', (2,))]", "[('a', '<f8', (2,))]", "[('a', '<i4', (3,))]",
		"[('a', [('b', '<i4')])]", "[('a', [('b', '<i4'), ('c', '<i4')])]", "[]", "[('a', 'S3')]", "[('a', '<U3')]",
		"[('a', '<M8[s]')]", "[('a', '<M8[ms]')]", "[('a', 'u1'), ('b', 'u1'), ('c', 'u1'), ('d', 'u1')]",
		"('<i4', (2,))", "('<f8', (2,))", "('<i4', (3,))", "('>i4', (2,))", "('<i4', (2, 1))", "('S3', (2,))",
		"(('<i4', (2,)), (3,))", "([('a', '<i4')], (2,))", "('<i4', (1,))",
		"[('a', '<i4'), ('b', [('c', '<f8'), ('d', 'S2')])]", "[('a', '<i4'), ('b', [('c', '<i8'), ('d', 'S2')])]",
		"[('a', '<i4'), ('b', [('c', '<f8'), ('e', 'S2')])]", "[(('B', 'a'), '<i4'), ('b', '<f8')]", "[('a', '<U1')]", "[('a', 'V4')]",
		"{'names': ['a'], 'formats': ['<i4'], 'itemsize': 8}", "{'names': ['a'], 'formats': ['<i4'], 'offsets': [4], 'itemsize': 8}")
}

// Casting.Allows is numpy's np.can_cast for every pair of castSpecs and
// every rule.
func TestCastingAgainstNumpy(t *testing.T) {
	specs := castSpecs()
	in, err := json.Marshal(specs)
	require.NoError(t, err)
	out := pypeer.Run(t, numpyRead+`
ds = [read(s) for s in json.load(sys.stdin)]
rules = ("no", "equiv", "safe", "same_kind", "unsafe")
print(json.dumps([["".join("1" if np.can_cast(a, b, r) else "0" for r in rules) for b in ds] for a in ds]))
`, in)
	var want [][]string
	require.NoError(t, json.Unmarshal(out, &want))
	dts := make([]DType, len(specs))
	for i, s := range specs {
		dts[i], err = ParseDType(s)
		require.NoError(t, err, s)
	}
	rules := []Casting{No, Equiv, Safe, SameKind, Unsafe}
	checked, wrong := 0, 0
	for i, from := range dts {
		for j, to := range dts {
			got := make([]byte, len(rules))
			for k, c := range rules {
				got[k] = map[bool]byte{false: '0', true: '1'}[c.Allows(from, to)]
			}
			checked += len(rules)
			if string(got) != want[i][j] {
				wrong++
				if wrong <= 40 {
					t.Errorf("%s -> %s: numpy's can_cast (no, equiv, safe, same_kind, unsafe) %s, Allows %s", specs[i], specs[j], want[i][j], got)
				}
			}
		}
	}
	t.Logf("%d dtypes, %d verdicts, %d disagree with numpy", len(dts), checked, wrong)
	assert.Zero(t, wrong)
}
