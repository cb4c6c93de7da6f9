package yaqtoml

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/yaqrecord"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// yaqd-core reads the state file with Python's TOML 1.0 reader (tomli,
// tomllib since Python 3.11): what Marshal writes, it reads as the same
// values, so a Go daemon and a Python one of a kind share their state
// files.
func TestMarshalReadByPython(t *testing.T) {
	text, err := Marshal(map[string]any{
		"bell":     "ring\a",
		"osc":      "\x1b]52;c;aGk=\a\x7f",
		"quotes":   `"""x""""" '''y''''\`,
		"":         int64(1),
		"a.b":      "é😀\u2028",
		"nested":   map[string]any{"deeper": map[string]any{"x": 1.5, "": map[string]any{}}},
		"list":     []any{int64(1), "two", []any{}, map[string]any{"t": true}},
		"tables":   []any{map[string]any{"a": int64(1)}, map[string]any{"b": map[string]any{"c": "d"}}},
		"floats":   []any{math.Inf(1), math.Inf(-1), 1e300, 5e-324, 0.1},
		"ints":     []any{int64(math.MinInt64), int64(math.MaxInt64)},
		"when":     time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC),
		"position": math.NaN(),
	})
	require.NoError(t, err)
	out := pypeer.Run(t, `
import datetime, math, tomllib
d = tomllib.loads(sys.stdin.read())
assert math.isnan(d.pop("position"))
want = {
    "bell": "ring\a", "osc": "\x1b]52;c;aGk=\a\x7f", "quotes": '"""x""""' + '"' + " '''y''''\\", "": 1,
    "a.b": "\u00e9\U0001f600\u2028",
    "nested": {"deeper": {"x": 1.5, "": {}}},
    "list": [1, "two", [], {"t": True}],
    "tables": [{"a": 1}, {"b": {"c": "d"}}],
    "floats": [math.inf, -math.inf, 1e300, 5e-324, 0.1],
    "ints": [-2**63, 2**63 - 1],
    "when": datetime.datetime(2024, 2, 29, 12, 0, tzinfo=datetime.timezone.utc),
}
print("same" if d == want else repr(d))
`, text)
	assert.Equal(t, "same\n", string(out), "%s", text)
}

// What yaqd-core answered to get_config and get_state (tomli_w's TOML:
// arrays over lines with a trailing comma, NaN and infinities, tables),
// recorded beside the repository, Decode reads, and Marshal writes again as
// TOML Decode reads back equal.
func TestDecodesWhatYaqdCoreWrote(t *testing.T) {
	seen := 0
	for _, kind := range yaqrecord.Kinds {
		_, _, calls := yaqrecord.Read(t, "../../../shared/yaq/", kind)
		for _, c := range calls {
			if c.Method != "get_config" && c.Method != "get_state" {
				continue
			}
			var text string
			require.NoError(t, json.Unmarshal(c.Result, &text))
			m, err := Decode([]byte(text))
			require.NoError(t, err, "%s %s: %q", kind, c.Method, text)
			again, err := Marshal(m)
			require.NoError(t, err)
			back, err := Decode(again)
			require.NoError(t, err)
			assert.Equal(t, plain(m), plain(back), "%s %s", kind, c.Method)
			seen++
		}
	}
	assert.Equal(t, 18, seen)
	m, err := Decode([]byte("destination = nan\nhw_limits = [\n    -inf,\n    inf,\n]\nposition = nan\n"))
	require.NoError(t, err)
	assert.Equal(t, []any{math.Inf(-1), math.Inf(1)}, m["hw_limits"])
}
