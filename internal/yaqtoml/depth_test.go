package yaqtoml

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Strings and keys that end where a careless scan would not (valid TOML,
// each shown to parse below), then 300,000 levels of nesting: none gets
// past the guard, and each is refused at once.
var hidingPlaces = map[string]struct{ head, tail string }{
	"literal, closed by four quotes":         {"a = ['''x'''', ", "]\n"},
	"literal, closed by five quotes":         {"a = ['''x''''', ", "]\n"},
	"basic, closed by five quotes":           {"a = [\"\"\"x\"\"\"\"\", ", "]\n"},
	"basic, an escaped quote before three":   {"a = [\"\"\"x\\\"\"\"\", ", "]\n"},
	"basic, an escaped backslash before six": {"a = [\"\"\"\\\\\"\"\"\"\"\", ", "]\n"}, // BurntSushi/toml takes it
	"literal with a backslash":               {"a = ['x\\', ", "]\n"},
	"basic, escaped quote":                   {"a = [\"\\\"'\", ", "]\n"},
	"empty basic":                            {"a = [\"\", ", "]\n"},
	"multi-line literal over lines":          {"a = ['''\n'x'\n''', ", "]\n"},
	"quoted key":                             {"\"a'\" = [", "]\n"},
	"literal key":                            {"'a\"' = [", "]\n"},
	"comment with a quote":                   {"# it's\na = [", "]\n"},
	"comment in an array":                    {"a = [ # ]\n", "]\n"},
	"quoted header":                          {"[\"t'\"]\na = [", "]\n"},
	"CRLF comment":                           {"# x\r\na = [", "]\n"},
}

func TestGuardSeesPastStrings(t *testing.T) {
	for name, c := range hidingPlaces {
		t.Run(name, func(t *testing.T) {
			shallow := c.head + "[[1]]" + c.tail
			var m map[string]any
			_, err := toml.Decode(shallow, &m)
			require.NoError(t, err, "valid TOML: %q", shallow)
			require.NoError(t, guard([]byte(shallow)))
			deep := c.head + strings.Repeat("[", 300_000) + strings.Repeat("]", 300_000) + c.tail
			start := time.Now()
			err = guard([]byte(deep))
			assert.Less(t, time.Since(start), time.Second)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "keys, arrays and tables nest deeper than 64 levels at byte ")
		})
	}
}

// Keys nest as arrays do: BurntSushi/toml's time grows faster than the
// square of a key's parts (10,000 parts took 6.7 s, 40,000 over three
// minutes), so dotted keys, table headers and inline tables are bounded
// with the arrays.
func TestGuardCountsKeyParts(t *testing.T) {
	parts := func(n int) string { return strings.Repeat("x.", n-1) + "x" }
	for name, doc := range map[string]string{
		"dotted key":              parts(100_000) + " = 1\n",
		"table header":            "[" + parts(100_000) + "]\n",
		"array of tables":         "[[" + parts(100_000) + "]]\n",
		"dotted key in a table":   "a = {" + parts(100_000) + " = 1}\n",
		"nested inline tables":    "a = " + strings.Repeat("{x = ", 100_000) + "1" + strings.Repeat("}", 100_000) + "\n",
		"header then key":         "[" + parts(40) + "]\n" + parts(25) + " = 1\n",
		"key then arrays":         parts(40) + " = " + strings.Repeat("[", 25) + strings.Repeat("]", 25) + "\n",
		"tables in arrays":        "a = " + strings.Repeat("[{x = ", 40) + "1" + strings.Repeat("}]", 40) + "\n",
		"quoted parts":            strings.Repeat(`"a.b".`, 100) + "x = 1\n",
		"array of tables at edge": "[[" + parts(64) + "]]\n",
	} {
		start := time.Now()
		err := guard([]byte(doc))
		assert.Less(t, time.Since(start), time.Second, name)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), "nest deeper than 64 levels", name)
		}
	}
	// At the limit, and past lines that ended their keys, all is well.
	for name, doc := range map[string]string{
		"64 parts":               parts(64) + " = 1\n",
		"63 parts and an array":  parts(63) + " = [1]\n",
		"header and key":         "[" + parts(32) + "]\n" + parts(32) + " = 1\n",
		"each line anew":         strings.Repeat(parts(60)+" = [[1.5, 2.5]]\n", 1000),
		"each table anew":        strings.Repeat("["+parts(60)+"]\n"+"a.b.c = 1\n", 10),
		"inline pairs each anew": "a = {" + strings.Repeat(parts(60)+" = 1, ", 100) + "z = 2}\n",
		"floats are not keys":    "a = [" + strings.Repeat("1.5, ", 1000) + "1.5]\n",
		"times are not keys":     "a = 07:32:00.999999\nb = 1979-05-27T00:32:00.999999-07:00\n",
	} {
		assert.NoError(t, guard([]byte(doc)), name)
	}
}

// Decode also refuses what the text hides from the guard and the value
// shows: arrays of tables inside arrays of tables count their arrays.
func TestDecodeBoundsArraysOfTables(t *testing.T) {
	var b strings.Builder
	key := "a"
	for range 40 {
		b.WriteString("[[" + key + "]]\n")
		key += ".a"
	}
	require.NoError(t, guard([]byte(b.String())), "40 key parts, then the header's array")
	_, err := Decode([]byte(b.String()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nests deeper than 64 levels")
}

// depthOf is how deeply a decoded value nests as the guard counts: each
// key and each array, but not the arrays of tables ([[a]]), which the
// header's parts stand for.
func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, 1+depthOf(e))
		}
	case []map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
	case []any:
		d = 1
		for _, e := range x {
			d = max(d, 1+depthOf(e))
		}
	}
	return d
}

// FuzzGuard: whatever BurntSushi/toml decodes from text that
// the guard let through nests no deeper than the guard counted. A string
// that hid a bracket from the guard, or a key part it did not count, shows
// as a value deeper than its count.
func FuzzGuard(f *testing.F) {
	for _, c := range hidingPlaces {
		f.Add([]byte(c.head + "[[1]]" + c.tail))
	}
	for _, s := range []string{"a.b.c = [[1], {d.e = [2]}]\n", "[t.u]\nv = {w = [[]]}\n", "[[a]]\n[[a.b]]\nc = 1\n",
		"a = \"\"\"\n\\\n  x\"\"\"\nb = [[1]]\n", "'k'.\"l\" = [ # c\n [1] ]\n", "a = [1.5, [2]]\n", "a = {b = 1, c.d = [1]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if len(text) > 4096 {
			return
		}
		var s depthScan
		if s.scan(text) != nil {
			return
		}
		var m map[string]any
		if _, err := toml.Decode(string(text), &m); err != nil {
			return
		}
		if d := depthOf(m); d > s.deepest {
			t.Fatalf("the value nests %d deep, the guard counted %d: %q\n%#v", d, s.deepest, text, m)
		}
	})
}

func TestDepthOf(t *testing.T) {
	var m map[string]any
	_, err := toml.Decode("[a.b]\nc.d = [[1]]\ne = {f = []}\n[[g]]\nh = 1\n", &m)
	require.NoError(t, err)
	assert.Equal(t, 6, depthOf(m), "a.b.c.d and two arrays")
	var s depthScan
	require.NoError(t, s.scan([]byte("[a.b]\nc.d = [[1]]\ne = {f = []}\n[[g]]\nh = 1\n")))
	assert.Equal(t, 6, s.deepest)
	assert.True(t, reflect.DeepEqual(m["g"], []map[string]any{{"h": int64(1)}}))
}

// The parser drops the other elements of an array one of whose inline
// tables has an empty key: the guard refuses that, and only that.
func TestGuardRefusesEmptyKeysInArrays(t *testing.T) {
	for _, doc := range []string{"list = [1, {\"\" = 2}]\n", "t = [{a = 1}, {'' = 2}, 3]\n", "x = [1, [{\"\" = 1}]]\n",
		"a.\"\" = [1, {}]\n", "[\"\"]\n\"\" = [\"\", {}]\n", "[[a.'']]\nb = [{}]\n"} {
		_, err := Decode([]byte(doc))
		assert.ErrorContains(t, err, "a table inside an array under or holding an empty key (\"\") at byte ", doc)
	}
	for doc, want := range map[string]map[string]any{
		"\"\" = 1\n":               {"": int64(1)},
		"a = {\"\" = 1}\n":         {"a": map[string]any{"": int64(1)}},
		"[[a]]\n\"\" = 1\n":        {"a": []map[string]any{{"": int64(1)}}},
		"a = [{b = {\"\" = 1}}]\n": {"a": []any{map[string]any{"b": map[string]any{"": int64(1)}}}},
		"a = [\"\", {b = \"\"}]\n": {"a": []any{"", map[string]any{"b": ""}}},
		"[\"\"]\n\"\" = \"\"\n":    {"": map[string]any{"": ""}},
	} {
		m, err := Decode([]byte(doc))
		require.NoError(t, err, doc)
		assert.Equal(t, want, m, doc)
	}
}
