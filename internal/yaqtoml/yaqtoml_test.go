package yaqtoml

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What Marshal writes is TOML that Decode reads back equal: strings with
// control characters and quotes of every kind, empty and quoted keys,
// tables in tables, arrays of tables, tables in arrays, non-finite floats
// and the extreme integers.
func TestMarshalRoundTrips(t *testing.T) {
	m := map[string]any{
		"bell":      "ring\a",
		"controls":  "\x00\x01\x1b]52;c;aGk=\x07\x7f\t\r\n",
		"quotes":    `"""x""""" '''y''''` + "\\",
		"unicode":   "é😀\u2028",
		"":          int64(1),
		"a.b":       "a key with a dot",
		"k\x1b[31m": true,
		"nested": map[string]any{
			"deeper": map[string]any{"x": 1.5, "empty": map[string]any{}, "": map[string]any{"": "x"}},
			"list":   []any{int64(1), "two", 3.5, []any{}, map[string]any{"inline": "table", "t": map[string]any{"": false}}},
		},
		"tables":   []any{map[string]any{"a": int64(1)}, map[string]any{"b": map[string]any{"c": "d"}}},
		"floats":   []any{math.Inf(1), math.Inf(-1), -0.0, 1e300, 5e-324},
		"ints":     []any{int64(math.MinInt64), int64(math.MaxInt64)},
		"when":     time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC),
		"position": math.NaN(),
	}
	text, err := Marshal(m)
	require.NoError(t, err)
	back, err := Decode(text)
	require.NoError(t, err, "%s", text)
	assert.True(t, math.IsNaN(back["position"].(float64)))
	delete(back, "position")
	want := map[string]any{}
	for k, v := range m {
		want[k] = v
	}
	delete(want, "position")
	want["tables"] = []map[string]any{{"a": int64(1)}, {"b": map[string]any{"c": "d"}}} // [[tables]]
	assert.Equal(t, want, back)
	assert.Contains(t, string(text), "bell = \"ring\\u0007\"\n")
	assert.Contains(t, string(text), "\"\" = 1\n")
	assert.NotContains(t, string(text), "\x1b", "control characters are escaped")
}

// The layout is yaqd-core's: keys sorted, values before tables, nothing
// indented, nil left out.
func TestMarshalLayout(t *testing.T) {
	text, err := Marshal(map[string]any{"position": 6.0, "hw_limits": []any{math.Inf(-1), math.Inf(1)},
		"destination": 6.0, "serial": nil, "identifiers": map[string]any{"red": 667.0, "blue": 470.0},
		"channels": map[string]any{"random_walk": map[string]any{"kind": "random-walk", "min": int64(-1)}}})
	require.NoError(t, err)
	assert.Equal(t, "destination = 6.0\nhw_limits = [-inf, inf]\nposition = 6.0\n\n"+
		"[channels]\n[channels.random_walk]\nkind = \"random-walk\"\nmin = -1\n\n"+
		"[identifiers]\nblue = 470.0\nred = 667.0\n", string(text))
}

// What TOML cannot hold is refused with the key that holds it, never
// written changed.
func TestMarshalRefuses(t *testing.T) {
	deep := any(1.0)
	for range MaxDepth {
		deep = []any{deep}
	}
	for want, m := range map[string]map[string]any{
		`s: the string "a\xffb" is not UTF-8`:               {"s": "a\xffb"},
		`t: the key "k\xff" is not UTF-8`:                   {"t": map[string]any{"k\xff": 1}},
		`the top level: the key "\xfe" is not UTF-8`:        {"\xfe": 1},
		`u: 18446744073709551615 is past the 64-bit signed`: {"u": uint64(math.MaxUint64)},
		`a[1] is nil, which a TOML array cannot hold`:       {"a": []any{1, nil}},
		`x[0][0][0]`: {"x": deep},
		`nests deeper than 64 levels (key parts and arrays)`:               {"x": deep},
		`"".x[1]: a table inside an array under`:                           {"": map[string]any{"x": []any{1, map[string]any{}}}},
		`c: a chan, which TOML cannot hold`:                                {"c": make(chan int)},
		`t[1]: a table inside an array under or holding an empty key ("")`: {"t": []any{1, map[string]any{"": 2}}},
		`list[2].k: the string "\x1b[31m\xff" is not UTF-8, which`:         {"list": []any{1, 2, map[string]any{"k": "\x1b[31m\xff"}}},
	} {
		_, err := Marshal(m)
		if assert.Error(t, err, want) {
			assert.Contains(t, err.Error(), want)
			assert.NotContains(t, err.Error(), "\x1b", "a message holds no raw control character")
		}
	}
	_, err := Marshal(map[string]any{"x": deep.([]any)[0]})
	assert.NoError(t, err, "64 levels: x and 63 arrays")
}

// A value nested 300,000 deep is refused at once; a wide one is written in
// time linear in its size (the writer it replaces took 203 s for 499,000
// levels).
func TestMarshalTime(t *testing.T) {
	deep := any("x")
	for range 300_000 {
		deep = []any{deep}
	}
	start := time.Now()
	_, err := Marshal(map[string]any{"a": deep})
	assert.Less(t, time.Since(start), time.Second)
	assert.ErrorContains(t, err, "nests deeper than 64 levels")

	wide := make([]any, 200_000)
	for i := range wide {
		wide[i] = float64(i) / 3
	}
	tables := make([]any, 2_000)
	for i := range tables {
		tables[i] = map[string]any{"a": []any{map[string]any{"b": []any{int64(i)}}}}
	}
	start = time.Now()
	text, err := Marshal(map[string]any{"wide": wide, "tables": tables})
	require.NoError(t, err)
	t.Logf("%d bytes in %s", len(text), time.Since(start))
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Greater(t, len(text), 2_000_000)
	assert.True(t, strings.HasPrefix(string(text), "wide = [0.0, 0.3333333333333333, "))
}

func TestMessages(t *testing.T) {
	assert.Equal(t, `"a\x1b]52;c;x\a"`, Key("a\x1b]52;c;x\a"))
	assert.Equal(t, "log_level", Key("log_level"))
	assert.Equal(t, `""`, Key(""))
	assert.Equal(t, `[1.0, "b\x1b", nan, 3]`, Value([]any{1.0, "b\x1b", math.NaN(), int64(3)}))
	assert.Equal(t, "a table of 2 keys", Value(map[string]any{"a": 1, "b": 2}))
	assert.Equal(t, "true", Value(true))
	assert.Equal(t, strings.Repeat("0, ", 8)+"... (10 items)]", Value(make([]int, 10))[1:])
}
