// Package yaqtoml writes config and state maps as TOML the way yaqd-core
// answers get_config and get_state, for yaq's daemon server and its kit.
package yaqtoml

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Text writes a config or state map as TOML, as get_config and
// get_state answer: keys sorted, scalars and arrays first, then tables.
func Text(m map[string]any) string {
	var b strings.Builder
	writeTable(&b, "", m)
	return b.String()
}

func writeTable(b *strings.Builder, prefix string, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var tables []string
	for _, k := range keys {
		if _, ok := m[k].(map[string]any); ok {
			tables = append(tables, k)
			continue
		}
		if m[k] == nil {
			continue // TOML has no null
		}
		fmt.Fprintf(b, "%s = %s\n", Key(k), Value(m[k]))
	}
	for _, k := range tables {
		name := Key(k)
		if prefix != "" {
			name = prefix + "." + name
		}
		fmt.Fprintf(b, "\n[%s]\n", name)
		writeTable(b, name, m[k].(map[string]any))
	}
}

// Key quotes k as a TOML key where it must be.
func Key(k string) string {
	for _, c := range k {
		if !(c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return strconv.Quote(k)
		}
	}
	return k
}

func Value(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case float32:
		return tomlFloat(float64(x))
	case float64:
		return tomlFloat(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Slice, reflect.Array:
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = Value(rv.Index(i).Interface())
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return strconv.Quote(fmt.Sprint(v))
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
