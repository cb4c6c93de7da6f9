package yaq

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrSchema: an Avro schema or protocol ndpack cannot use: malformed JSON,
// an unknown type, a reference to an undefined name.
var ErrSchema = errors.New("invalid schema")

// Schema is a parsed Avro schema: one node of its type tree. Named types
// (records, enums, fixed) are shared by every reference to them.
type Schema struct {
	Type     string    // null, boolean, int, long, float, double, bytes, string, array, map, record, enum, fixed, union
	Name     string    // of a record, enum or fixed
	Logical  string    // the logicalType, if any ("ndarray" for YEP-113 arrays)
	Items    *Schema   // of an array
	Values   *Schema   // of a map
	Fields   []Field   // of a record
	Symbols  []string  // of an enum
	Size     int       // of a fixed
	Branches []*Schema // of a union
}

// Field is a record field, or a message's parameter.
type Field struct {
	Name       string
	Type       *Schema
	Default    any  // the default value, as JSON decodes it (numbers as json.Number)
	HasDefault bool // a default is declared (it may be null)
}

// isArray reports whether s is the YEP-113 ndarray record.
func (s *Schema) isArray() bool {
	return s.Type == "record" && (s.Logical == "ndarray" || s.Name == "ndarray")
}

// String returns the schema's type name, as an error message would say it.
func (s *Schema) String() string {
	switch s.Type {
	case "record", "enum", "fixed":
		return s.Name
	case "array":
		return "array<" + s.Items.String() + ">"
	case "map":
		return "map<" + s.Values.String() + ">"
	case "union":
		var b bytes.Buffer
		b.WriteByte('[')
		for i, br := range s.Branches {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(br.String())
		}
		b.WriteByte(']')
		return b.String()
	}
	return s.Type
}

// schemaParser builds schemas from JSON, resolving names.
type schemaParser struct {
	named map[string]*Schema
	depth int
}

var primitive = map[string]bool{
	"null": true, "boolean": true, "int": true, "long": true, "float": true,
	"double": true, "bytes": true, "string": true,
}

// parse builds a schema from its JSON form (a string, a list or an object).
func (p *schemaParser) parse(v any) (*Schema, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 64 {
		return nil, fmt.Errorf("%w: nested more than 64 deep", ErrSchema)
	}
	switch x := v.(type) {
	case string:
		if primitive[x] {
			return &Schema{Type: x}, nil
		}
		if s, ok := p.named[x]; ok {
			return s, nil
		}
		return nil, fmt.Errorf("%w: unknown type %q", ErrSchema, x)
	case []any:
		u := &Schema{Type: "union"}
		for _, b := range x {
			s, err := p.parse(b)
			if err != nil {
				return nil, err
			}
			u.Branches = append(u.Branches, s)
		}
		return u, nil
	case map[string]any:
		t, _ := x["type"].(string)
		logical, _ := x["logicalType"].(string)
		name, _ := x["name"].(string)
		switch t {
		case "array":
			items, err := p.parse(x["items"])
			if err != nil {
				return nil, err
			}
			return &Schema{Type: t, Items: items, Logical: logical}, nil
		case "map":
			values, err := p.parse(x["values"])
			if err != nil {
				return nil, err
			}
			return &Schema{Type: t, Values: values, Logical: logical}, nil
		case "record", "error":
			s := &Schema{Type: "record", Name: name, Logical: logical}
			if name != "" {
				p.named[name] = s // before the fields: a record may refer to itself
			}
			fields, _ := x["fields"].([]any)
			for _, f := range fields {
				fm, _ := f.(map[string]any)
				fname, _ := fm["name"].(string)
				ft, err := p.parse(fm["type"])
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", fname, err)
				}
				s.Fields = append(s.Fields, Field{Name: fname, Type: ft})
			}
			return s, nil
		case "enum":
			s := &Schema{Type: t, Name: name, Logical: logical}
			syms, _ := x["symbols"].([]any)
			for _, sym := range syms {
				str, _ := sym.(string)
				s.Symbols = append(s.Symbols, str)
			}
			if name != "" {
				p.named[name] = s
			}
			return s, nil
		case "fixed":
			size, _ := x["size"].(json.Number).Int64()
			s := &Schema{Type: t, Name: name, Size: int(size), Logical: logical}
			if name != "" {
				p.named[name] = s
			}
			return s, nil
		}
		if primitive[t] || p.named[t] != nil {
			s, err := p.parse(t)
			if err != nil {
				return nil, err
			}
			if logical != "" && primitive[t] {
				c := *s
				c.Logical = logical
				return &c, nil
			}
			return s, nil
		}
		return nil, fmt.Errorf("%w: unknown type %v", ErrSchema, x["type"])
	}
	return nil, fmt.Errorf("%w: %T is not a schema", ErrSchema, v)
}

// ParseSchema parses one Avro schema from its JSON text.
func ParseSchema(text string) (*Schema, error) {
	v, err := decodeJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	return (&schemaParser{named: map[string]*Schema{}}).parse(v)
}

// decodeJSON decodes JSON that may hold the bare NaN, Infinity and
// -Infinity tokens Python's json module writes (yaq protocols carry them in
// defaults), as null.
func decodeJSON(text []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(sanitizeJSON(text)))
	dec.UseNumber() // a default of 2 is an int, 2.0 a double, as Python wrote them
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	return v, nil
}

// sanitizeJSON replaces NaN, Infinity and -Infinity outside strings by null.
func sanitizeJSON(text []byte) []byte {
	var out []byte
	inString, escaped := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			out = append(out, c)
			continue
		}
		if c == '"' {
			inString = true
		}
		replaced := false
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(text[i:], []byte(tok)) {
				out = append(out, "null"...)
				i += len(tok) - 1
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, c)
		}
	}
	return out
}
