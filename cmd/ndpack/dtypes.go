package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
)

// numpyNames are numpy's names and one-letter codes of its numeric
// dtypes, as np.dtype(NAME) takes them on the 64-bit Linux and macOS
// machines ndpack runs on ("int" and "long" are int64 there), with the
// typestr each gives in the machine's byte order.
var numpyNames = map[string]string{
	"bool": "|b1", "bool_": "|b1", "bool8": "|b1", "?": "|b1", "b1": "|b1",
	"int8": "|i1", "byte": "|i1", "b": "|i1", "i1": "|i1",
	"uint8": "|u1", "ubyte": "|u1", "B": "|u1", "u1": "|u1",
	"int16": "=i2", "short": "=i2", "h": "=i2", "i2": "=i2",
	"uint16": "=u2", "ushort": "=u2", "H": "=u2", "u2": "=u2",
	"int32": "=i4", "intc": "=i4", "i": "=i4", "i4": "=i4",
	"uint32": "=u4", "uintc": "=u4", "I": "=u4", "u4": "=u4",
	"int64": "=i8", "int": "=i8", "int_": "=i8", "long": "=i8", "longlong": "=i8", "intp": "=i8", "l": "=i8", "q": "=i8", "p": "=i8", "i8": "=i8",
	"uint64": "=u8", "uint": "=u8", "ulong": "=u8", "ulonglong": "=u8", "uintp": "=u8", "L": "=u8", "Q": "=u8", "P": "=u8", "u8": "=u8",
	"float16": "=f2", "half": "=f2", "e": "=f2", "f2": "=f2",
	"float32": "=f4", "single": "=f4", "f": "=f4", "f4": "=f4",
	"float64": "=f8", "double": "=f8", "float": "=f8", "float_": "=f8", "d": "=f8", "f8": "=f8",
	"complex64": "=c8", "csingle": "=c8", "singlecomplex": "=c8", "F": "=c8", "c8": "=c8",
	"complex128": "=c16", "cdouble": "=c16", "complex": "=c16", "complex_": "=c16", "cfloat": "=c16", "D": "=c16", "c16": "=c16",
}

// parseDTypeSpec reads a dtype as numpy's np.dtype() takes it on a command
// line: a typestr ("<f8", ">i2", "|S10", "<M8[ns]"), a name or code with or
// without a byte order ("float64", "f8", ">i2", "uint8", "bool",
// "datetime64[ns]", "U5", "S10"), a record spec of NAME:DTYPE fields
// ("x:<f4,y:<f4,id:<u2", a field's shape after its dtype: "pos:<f4(3)"),
// or numpy's list form ("[('x', '<f4'), ('pos', '<f4', (3,))]").
func parseDTypeSpec(s string) (ndarray.DType, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return ndarray.DType{}, fmt.Errorf("an empty dtype")
	case strings.HasPrefix(s, "["):
		return parseDescrList(s)
	case strings.Contains(s, ":"):
		return parseRecordSpec(s)
	}
	return parsePlainDType(s)
}

func parsePlainDType(s string) (ndarray.DType, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return ndarray.DType{}, fmt.Errorf("an empty dtype")
	}
	order, name := "", s
	if strings.ContainsAny(s[:1], "<>=|") {
		order, name = s[:1], s[1:]
	}
	if ts, ok := numpyNames[name]; ok {
		if order != "" && ts[0] != '|' {
			ts = order + ts[1:]
		}
		return ndarray.ParseDType(ts)
	}
	for long, short := range map[string]string{"datetime64": "M8", "timedelta64": "m8"} {
		if rest, ok := strings.CutPrefix(name, long); ok && (rest == "" || rest[0] == '[') {
			name = short + rest
			break
		}
	}
	if name == "" {
		return ndarray.DType{}, fmt.Errorf("%q is not a dtype", s)
	}
	switch name[0] {
	case 'S', 'V', 'a':
		if name[0] == 'a' {
			name = "S" + name[1:]
		}
		if order == "" || order == "<" || order == ">" || order == "=" {
			order = "|"
		}
	case 'U', 'M', 'm':
		if order == "" || order == "|" {
			order = "="
		}
	default:
		if order == "" {
			order = "="
		}
	}
	dt, err := ndarray.ParseDType(order + name)
	if err != nil {
		return ndarray.DType{}, fmt.Errorf("%q is not a dtype numpy names (float64, f8, <i2, uint8, bool, complex64, U5, datetime64[ns], ...)", s)
	}
	return dt, nil
}

// parseRecordSpec reads NAME:DTYPE[(SHAPE)] fields separated by commas.
func parseRecordSpec(s string) (ndarray.DType, error) {
	var fields []ndarray.Field
	off := 0
	for _, part := range splitTopLevel(s, ',') {
		name, spec, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || name == "" {
			return ndarray.DType{}, fmt.Errorf("record field %q: want NAME:DTYPE", part)
		}
		var shape []int
		if i := strings.IndexByte(spec, '('); i > 0 && strings.HasSuffix(spec, ")") {
			var err error
			if shape, err = parseShapeTuple(spec[i:]); err != nil {
				return ndarray.DType{}, fmt.Errorf("record field %s: %w", name, err)
			}
			spec = spec[:i]
		}
		dt, err := parsePlainDType(spec)
		if err != nil {
			return ndarray.DType{}, fmt.Errorf("record field %s: %w", name, err)
		}
		fields = append(fields, ndarray.Field{Name: name, DType: dt, Shape: shape, Offset: off})
		size, err := ndarray.ByteSize(dt, shape)
		if err != nil {
			return ndarray.DType{}, fmt.Errorf("record field %s: %w", name, err)
		}
		off += size
	}
	return ndarray.NewRecord(fields, off)
}

// parseDescrList reads numpy's list form: [('name', 'dtype'[, shape]), ...],
// nested lists for nested records.
func parseDescrList(s string) (ndarray.DType, error) {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(s, "["), "]")
	if !ok {
		return ndarray.DType{}, fmt.Errorf("%q: a list form ends with ]", s)
	}
	var items []ndarray.DescrItem
	for _, t := range splitTopLevel(inner, ',') {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		body, ok := strings.CutSuffix(strings.TrimPrefix(t, "("), ")")
		if !ok || !strings.HasPrefix(t, "(") {
			return ndarray.DType{}, fmt.Errorf("%q: each field is a tuple ('name', 'dtype'[, shape])", t)
		}
		parts := splitTopLevel(body, ',')
		if len(parts) > 0 && strings.TrimSpace(parts[len(parts)-1]) == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) < 2 || len(parts) > 3 {
			return ndarray.DType{}, fmt.Errorf("%q: each field is a tuple ('name', 'dtype'[, shape])", t)
		}
		name, err := unquote(parts[0])
		if err != nil {
			return ndarray.DType{}, err
		}
		var dt ndarray.DType
		if p := strings.TrimSpace(parts[1]); strings.HasPrefix(p, "[") {
			dt, err = parseDescrList(p)
		} else {
			var spec string
			if spec, err = unquote(p); err == nil {
				dt, err = parsePlainDType(spec)
			}
		}
		if err != nil {
			return ndarray.DType{}, err
		}
		item := ndarray.DescrItem{Name: name, DType: dt}
		if len(parts) == 3 {
			if item.Shape, err = parseShapeTuple(strings.TrimSpace(parts[2])); err != nil {
				return ndarray.DType{}, err
			}
		}
		items = append(items, item)
	}
	return ndarray.RecordFromDescr(items)
}

// splitTopLevel splits s at sep outside brackets, parentheses and quotes.
func splitTopLevel(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func unquote(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1], nil
	}
	return "", fmt.Errorf("%s: want a quoted name or dtype", s)
}

// parseShapeTuple reads (3,) or (2, 3).
func parseShapeTuple(s string) ([]int, error) {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(s, "("), ")")
	if !ok || !strings.HasPrefix(s, "(") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%q is not a shape such as (3,) or (2, 3)", s)
		}
		return []int{n}, nil
	}
	var shape []int
	for _, p := range strings.Split(inner, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a shape such as (3,) or (2, 3)", s)
		}
		shape = append(shape, n)
	}
	return shape, nil
}
