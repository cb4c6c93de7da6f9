package ndarray

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// literalCases are literals and near-literals: numbers, strings with
// prefixes and escapes, containers, comments, JSON.
var literalCases = []string{
	"0", "00", "0_0", "01", "7", "-7", "+7", "- 7", "--7", "1_000", "1__0", "1_", "_1", "0x1f", "0X_1F", "0x", "0o17", "0o8", "0b101", "0b2",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "99999999999999999999999",
	"1.5", ".5", "1.", "1e3", "1E-3", "1e", "1_0.5", "1j", "2.5J", "0x1.5", "1e3j", "inf", "nan",
	"'a'", `"a"`, "'it''s'", `'a' "b"`, "'a' 'b' 'c'", "u'a'", "r'a\\n'", "R'\\''", "b'a'", "B'\\x00'", "br'\\n'", "rb'x'", "bu'x'", "f'x'",
	"'''a\nb'''", `"""a"""`, "'a\nb'", `'\n\t\\\''`, `'\x41'`, `'\x4'`, `'\u00e9'`, `'\U0001F600'`, `'\U00110000'`, `'\101'`, `'\0'`, `'\q'`,
	`'\N{DIGIT ONE}'`, `b'\u00e9'`, "b'é'", `'\ud800'`, "'a\\\nb'", "'é'",
	"()", "(1)", "(1,)", "(1, 2)", "(1, 2,)", "(,)", "(1,,)", "((1))", "[]", "[1]", "[1,]", "[,]", "[1 2]", "{}", "{1: 2}", "{1: 2,}",
	"{1, 2}", "{'a': 1, 'a': 2}", "{1: 'x', 1.0: 'y', True: 'z'}", "{[1]: 2}", "{(1, [2]): 3}", "{(1, 2): 3}",
	"[1] # c", "[1, # c\n 2]", "[1,\n2]", "(1,\\\n2)", "[1]\n", "[1]\n[2]", "True", "False", "None", "true", "null",
	`{"a": true, "b": [null, false]}`, `{"a": 1,}`, `{'a': true}`, `["\u00e9", "\/", "\ud83d\ude00"]`, `["\x41"]`, `[NaN, Infinity, -Infinity]`,
	`[1.5e3, -0, 0.5]`, `[01]`, `[1.]`, `{"a": 1 "b": 2}`, `{1: 2}`, "[\"a\tb\"]", "['a' \"b\"]", "x", "[x]", "[1+2j]", "[...]",
}

// pyEncode writes v as the Python side of the test writes its values.
func pyEncode(v pyValue) any {
	switch v.kind {
	case pyNone:
		return []any{"none"}
	case pyBool:
		return []any{"bool", v.i == 1}
	case pyInt:
		if v.big {
			return []any{"bigint"}
		}
		return []any{"int", strconv.FormatInt(v.i, 10)}
	case pyFloat:
		return []any{"float"}
	case pyStr:
		return []any{"str", v.s}
	case pyBytes:
		return []any{"bytes", hex.EncodeToString([]byte(v.s))}
	}
	items := []any{}
	for _, it := range v.items {
		items = append(items, pyEncode(it))
	}
	name := map[pyKind]string{pyTuple: "tuple", pyList: "list", pyDict: "dict"}[v.kind]
	return []any{name, items}
}

// The literal reader reads what Python's ast.literal_eval, or failing
// it json.loads, reads, as they read it.
func TestParseLiteralAgainstPython(t *testing.T) {
	in, err := json.Marshal(literalCases)
	require.NoError(t, err)
	out := pypeer.Run(t, `
import ast, json, sys
def enc(v):
    if v is None: return ["none"]
    if isinstance(v, bool): return ["bool", v]
    if isinstance(v, int): return ["bigint"] if not -2**63 <= v < 2**63 else ["int", str(v)]
    if isinstance(v, (float, complex)): return ["float"]
    if isinstance(v, str): return ["str", v]
    if isinstance(v, bytes): return ["bytes", v.hex()]
    if isinstance(v, tuple): return ["tuple", [enc(x) for x in v]]
    if isinstance(v, list): return ["list", [enc(x) for x in v]]
    if isinstance(v, dict): return ["dict", [y for k, x in v.items() for y in (enc(k), enc(x))]]
    return ["other"]
res = []
for s in json.load(sys.stdin):
    try:
        v = ast.literal_eval(s)
    except Exception:
        try:
            v = json.loads(s)
        except Exception:
            res.append(None)
            continue
    try:
        res.append(json.dumps(enc(v)))
    except UnicodeEncodeError:
        res.append(json.dumps(["surrogate"]))
print(json.dumps(res))
`, in)
	var want []*string
	require.NoError(t, json.Unmarshal(out, &want))
	for i, s := range literalCases {
		v, err := parseLiteral(s)
		switch {
		case want[i] == nil:
			assert.Error(t, err, "%q: Python reads no literal, parseLiteral %v", s, v)
		case s == "[1+2j]" || s == "[...]" || *want[i] == `["other"]`:
			assert.Error(t, err, "%q: a literal no dtype is made of", s)
		case s == `'\N{DIGIT ONE}'`:
			assert.Equal(t, errUnicodeName, err, s)
		case s == `'\ud800'` || s == `["\u00e9", "\/", "\ud83d\ude00"]`:
			assert.Equal(t, errSurrogate, err, "%q: Python reads surrogates", s)
		default:
			if assert.NoError(t, err, "%q: Python reads %s", s, *want[i]) {
				got, _ := json.Marshal(pyEncode(v))
				assert.JSONEq(t, *want[i], string(got), "%q", s)
			}
		}
	}
}
