package kit

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ndpack/ndpack/internal/yaqtoml"
	"github.com/ndpack/ndpack/yaq/avro"
)

// checkValue checks a TOML value (or a description's default) against its
// Avro schema and returns it in the form the daemon's handlers see:
// integers as int64, floats and doubles as float64 (an integer accepted
// for them), arrays as []any, maps as map[string]any. path names the value
// in errors.
func checkValue(s *avro.Schema, v any, path string) (any, error) {
	bad := func() (any, error) {
		return nil, fmt.Errorf("%s%s is not a %s", pathPrefix(path), describeTOML(v), s)
	}
	switch s.Type {
	case "null":
		if v != nil {
			return bad()
		}
		return nil, nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad()
		}
		return v, nil
	case "int", "long":
		i, ok := v.(int64)
		if !ok {
			if x, isInt := v.(int); isInt {
				i, ok = int64(x), true
			}
		}
		if !ok || (s.Type == "int" && (i < math.MinInt32 || i > math.MaxInt32)) {
			return bad()
		}
		return i, nil
	case "float", "double":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		}
		return bad()
	case "string":
		if _, ok := v.(string); !ok {
			return bad()
		}
		return v, nil
	case "bytes", "fixed":
		if str, ok := v.(string); ok {
			return []byte(str), nil
		}
		return bad()
	case "enum":
		str, ok := v.(string)
		if !ok || !slices.Contains(s.Symbols, str) {
			return nil, fmt.Errorf("%s%s is not one of the %s symbols %s", pathPrefix(path), describeTOML(v), s.Name, strings.Join(s.Symbols, ", "))
		}
		return str, nil
	case "array":
		return checkArray(s, v, path)
	case "map":
		return checkMap(s, v, path)
	case "record", "error":
		return checkRecord(s, v, path)
	case "union":
		var first error
		for _, b := range s.Branches {
			x, err := checkValue(b, v, path)
			if err == nil {
				return x, nil
			}
			if first == nil {
				first = err
			}
		}
		if len(s.Branches) == 2 && s.Branches[0].Type == "null" {
			return nil, first
		}
		return bad()
	}
	return bad()
}

// checkArray checks a TOML array against an Avro array's items.
func checkArray(s *avro.Schema, v any, path string) (any, error) {
	items := tomlArray(v)
	if v == nil || (items == nil && !isList(v)) {
		return nil, fmt.Errorf("%s%s is not a %s", pathPrefix(path), describeTOML(v), s)
	}
	out := make([]any, len(items))
	for i, e := range items {
		x, err := checkValue(s.Items, e, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

// checkMap checks a TOML table against an Avro map's values.
func checkMap(s *avro.Schema, v any, path string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s%s is not a %s", pathPrefix(path), describeTOML(v), s)
	}
	out := make(map[string]any, len(m))
	for _, k := range sortedKeys(m) {
		x, err := checkValue(s.Values, m[k], joinKey(path, k))
		if err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, nil
}

// checkRecord checks a TOML table against an Avro record's fields, giving
// missing fields their defaults.
func checkRecord(s *avro.Schema, v any, path string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s%s is not a %s", pathPrefix(path), describeTOML(v), s)
	}
	out := make(map[string]any, len(s.Fields))
	for _, f := range s.Fields {
		x, has := m[f.Name]
		if !has {
			if f.HasDefault {
				out[f.Name] = f.Default
				continue
			}
			return nil, fmt.Errorf("%smissing", pathPrefix(joinKey(path, f.Name)))
		}
		x, err := checkValue(f.Type, x, joinKey(path, f.Name))
		if err != nil {
			return nil, err
		}
		out[f.Name] = x
	}
	return out, nil
}

// tomlArray gives a TOML array's items, arrays of tables included.
func tomlArray(v any) []any {
	switch x := v.(type) {
	case []any:
		if x == nil {
			return []any{}
		}
		return x
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	}
	return nil
}

func joinKey(path, k string) string {
	if path == "" {
		return yaqtoml.Key(k)
	}
	return path + "." + yaqtoml.Key(k)
}

func pathPrefix(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

// describeTOML shows a value as its TOML, with what kind it is.
func describeTOML(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "the string " + yaqtoml.Value(v)
	case int64, int:
		return "the integer " + yaqtoml.Value(v)
	case float64:
		return "the float " + yaqtoml.Value(v)
	case bool:
		return "the boolean " + yaqtoml.Value(v)
	case map[string]any:
		return "a table"
	}
	if tomlArray(v) != nil {
		return "the array " + yaqtoml.Value(v)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}
