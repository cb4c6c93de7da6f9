// Package yaqtoml reads and writes the TOML of yaq daemons (config and
// state files, the get_config and get_state answers) with
// BurntSushi/toml, within bounds that a hostile file cannot get past:
// text that nests deeper than MaxDepth never reaches the parser, the one
// construct its parser reads wrong is refused, and what Marshal writes,
// Decode reads back equal.
package yaqtoml

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// MaxDepth bounds how deeply config and state TOML nests, counting each
// key part and each array from the top: a.b = [[1]] is 4 deep. Real files
// nest a few levels.
const MaxDepth = 64

// Decode parses text, a config or state file, as BurntSushi/toml does into
// a map (int64, float64, string, bool, time.Time, []any, map[string]any,
// and []map[string]any for an array of tables), after a linear scan of the
// text has bounded it. It fails on text that is not TOML, on text that
// nests deeper than MaxDepth (counting each key part and each array from
// the top: a.b = [[1]] is 4 deep), which the scan or, for arrays of
// tables within arrays of tables, the decoded value shows, and on an
// inline table inside an array under or holding an empty key (""), which
// BurntSushi/toml reads wrong, dropping the array's other values.
func Decode(text []byte) (map[string]any, error) {
	if err := guard(text); err != nil {
		return nil, err
	}
	var out map[string]any
	if _, err := toml.Decode(string(text), &out); err != nil {
		return nil, err
	}
	if err := checkTree(reflect.ValueOf(out), place{}); err != nil {
		return nil, err
	}
	return out, nil
}

// Marshal writes m as TOML with BurntSushi/toml's encoder, as get_config
// and get_state answer and the state file holds: keys sorted, each table's
// values before its sub-tables, nothing indented, nil values left out
// (TOML has no null). Decode reads back what it writes, equal but for Go
// types (an int is read as int64, a []float64 as []any). It fails, naming
// the key, on what TOML cannot hold or Decode would refuse: a string or
// key that is not UTF-8, an unsigned integer past int64, nil in an array,
// a value of no TOML type (a channel, a function, a complex number),
// nesting deeper than MaxDepth, or a table inside an array under or
// holding an empty key (which Decode would refuse, see there). Its time is linear in
// the size of m.
func Marshal(m map[string]any) ([]byte, error) {
	if err := checkTree(reflect.ValueOf(m), place{}); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// place is where checkTree finds a value: its path (for messages), how
// many keys and arrays lie above it, whether the encoder writes it inline
// (within an array that is not an array of tables), whether it is an
// element of such an array, and whether an empty key lies on its path.
type place struct {
	path                 string
	depth                int
	inline, inArr, empty bool
}

// checkTree walks v, found at p, for what Marshal refuses; the walk stops
// past MaxDepth, so its time is linear in v.
func checkTree(v reflect.Value, p place) error {
	if p.depth > MaxDepth {
		return fmt.Errorf("%s nests deeper than %d levels (key parts and arrays), which a config or state file may not", p.path, MaxDepth)
	}
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) {
			return fmt.Errorf("%s: the string %s is not UTF-8, which TOML cannot hold", p.path, cutQuote(s))
		}
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return fmt.Errorf("%s: a %s, which TOML cannot hold", p.path, v.Kind())
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		if v.Uint() > math.MaxInt64 {
			return fmt.Errorf("%s: %d is past the 64-bit signed integers TOML holds", p.path, v.Uint())
		}
	case reflect.Map:
		return checkMap(v, p)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // []byte: an array of small integers
		}
		// An array of tables ([[a]]) at a table's level is written as
		// tables, anything else inline.
		tables := !p.inline && v.Len() > 0
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if (e.Kind() == reflect.Interface || e.Kind() == reflect.Pointer || e.Kind() == reflect.Map || e.Kind() == reflect.Slice) && e.IsNil() {
				return fmt.Errorf("%s[%d] is nil, which a TOML array cannot hold", p.path, i)
			}
			for e.Kind() == reflect.Interface || e.Kind() == reflect.Pointer {
				e = e.Elem()
			}
			tables = tables && (e.Kind() == reflect.Map || e.Kind() == reflect.Struct && e.Type() != timeType)
		}
		for i := 0; i < v.Len(); i++ {
			at := place{path: fmt.Sprintf("%s[%d]", p.path, i), depth: p.depth + 1, inline: !tables, inArr: !tables, empty: p.empty}
			if err := checkTree(v.Index(i), at); err != nil {
				return err
			}
		}
	}
	return nil
}

var timeType = reflect.TypeOf(time.Time{})

// checkMap is checkTree for a map.
func checkMap(v reflect.Value, p place) error {
	if v.Type().Key().Kind() != reflect.String {
		return nil // the encoder refuses it, naming the type
	}
	emptyKey := func() error {
		return fmt.Errorf("%s: a table inside an array under or holding an empty key (\"\"), which the TOML parser reads wrong (it drops the array's other values)", p.path)
	}
	if p.inArr && p.empty {
		return emptyKey()
	}
	iter := v.MapRange()
	for iter.Next() {
		k := iter.Key().String()
		if !utf8.ValidString(k) {
			return fmt.Errorf("%s: the key %s is not UTF-8, which TOML cannot hold", orTop(p.path), cutQuote(k))
		}
		if p.inArr && k == "" {
			return emptyKey()
		}
		at := place{path: join(p.path, k), depth: p.depth + 1, inline: p.inline, empty: p.empty || k == ""}
		if err := checkTree(iter.Value(), at); err != nil {
			return err
		}
	}
	return nil
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// join appends the key k to path, quoted where TOML would quote it.
func join(path, k string) string {
	if path == "" {
		return Key(k)
	}
	return path + "." + Key(k)
}

// Key is k as a key in a message: bare where TOML allows it, else quoted
// with every control character and invalid byte escaped.
func Key(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return cutQuote(k)
		}
	}
	return k
}

// cutQuote quotes s for a message, escaped as Go quotes strings, keeping
// at most its first 200 bytes.
func cutQuote(s string) string {
	if len(s) <= 200 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:200]) + fmt.Sprintf("... (%d bytes)", len(s))
}

// FromJSON turns JSON values (numbers as json.Number, as a protocol's or a
// command line's JSON is decoded) into the Go values TOML would give:
// whole numbers that fit as int64, others as float64, lists and tables
// copied.
func FromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = FromJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = FromJSON(e)
		}
		return out
	}
	return v
}

// Value is v as a value in a message: a string quoted (control characters
// escaped), a float as TOML writes it, a list in brackets.
func Value(v any) string {
	switch x := v.(type) {
	case string:
		return cutQuote(x)
	case float64:
		return tomlFloat(x)
	case float32:
		return tomlFloat(float64(x))
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		parts := make([]string, 0, min(rv.Len(), 8))
		for i := 0; i < rv.Len() && i < 8; i++ {
			parts = append(parts, Value(rv.Index(i).Interface()))
		}
		if rv.Len() > 8 {
			parts = append(parts, fmt.Sprintf("... (%d items)", rv.Len()))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		return fmt.Sprintf("a table of %d keys", rv.Len())
	}
	q := strconv.Quote(fmt.Sprint(v)) // a number or boolean as it is; anything else escaped
	return q[1 : len(q)-1]
}

func tomlFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
