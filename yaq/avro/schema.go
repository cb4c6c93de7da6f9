package avro

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// maxFixedSize bounds the size of a fixed: Avro declares sizes as ints.
const maxFixedSize = math.MaxInt32

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

	// What checking a parsed schema established, so that decoding need
	// not work it out again from a schema a peer may have made costly to
	// walk; a Schema built by hand has checked false.
	checked bool
	zero    bool // its values take no bytes: null, fixed of size 0, records of those
}

// Field is a record field, or a message's parameter.
type Field struct {
	Name       string  // the field's or parameter's name, as it is declared
	Type       *Schema // its Avro type
	Default    any     // the default value, as JSON decodes it (numbers as json.Number)
	HasDefault bool    // a default is declared (it may be null)
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

// schemaParser builds schemas from JSON, resolving names. Every schema it
// returns has been checked (see check).
type schemaParser struct {
	named map[string]*Schema
	depth int
}

var primitive = map[string]bool{
	"null": true, "boolean": true, "int": true, "long": true, "float": true,
	"double": true, "bytes": true, "string": true,
}

// parse builds a schema from its JSON form (a string, a list or an object)
// and, at the outermost call, checks it.
func (p *schemaParser) parse(v any) (*Schema, error) {
	if p.depth == 0 {
		p.depth++
		defer func() { p.depth-- }()
		s, err := p.parseNode(v)
		if err != nil {
			return nil, err
		}
		if err := check(s); err != nil {
			return nil, err
		}
		return s, nil
	}
	return p.parseNode(v)
}

// define registers the named type s, refusing a name given twice: which of
// two definitions a reference means would be a guess.
func (p *schemaParser) define(s *Schema) error {
	if s.Name == "" {
		return schemaErr("a %s without a name", s.Type)
	}
	if _, dup := p.named[s.Name]; dup || primitive[s.Name] {
		return schemaErr("%s %q: the name is defined twice", s.Type, s.Name)
	}
	p.named[s.Name] = s
	return nil
}

func (p *schemaParser) parseNode(v any) (*Schema, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 65 {
		return nil, schemaErr("nested more than 64 deep")
	}
	switch x := v.(type) {
	case string:
		if primitive[x] {
			return &Schema{Type: x}, nil
		}
		if s, ok := p.named[x]; ok {
			return s, nil
		}
		return nil, schemaErr("unknown type %q", x)
	case []any:
		return p.parseUnion(x)
	case map[string]any:
		return p.parseObject(x)
	}
	return nil, schemaErr("%s is not a schema", codecerr.JSONExcerpt(v))
}

// parseUnion parses a union's list of branches.
func (p *schemaParser) parseUnion(x []any) (*Schema, error) {
	u := &Schema{Type: "union"}
	if len(x) == 0 {
		return nil, schemaErr("a union without branches, which no value fits")
	}
	seen := map[string]bool{}
	for _, b := range x {
		s, err := p.parse(b)
		if err != nil {
			return nil, err
		}
		// Avro forbids both: a branch index must say which type follows.
		if s.Type == "union" {
			return nil, schemaErr("union %s holds the union %s as a branch", codecerr.JSONExcerpt(x), s)
		}
		key := s.Type
		if s.Name != "" {
			key = "named " + s.Name
		}
		if seen[key] {
			return nil, schemaErr("union %s holds %s twice", codecerr.JSONExcerpt(x), s)
		}
		seen[key] = true
		u.Branches = append(u.Branches, s)
	}
	return u, nil
}

// parseObject parses a schema written as a JSON object: a complex type, or
// a primitive or named one with a logical type.
func (p *schemaParser) parseObject(x map[string]any) (*Schema, error) {
	t, _ := x["type"].(string)
	logical, _ := x["logicalType"].(string)
	name, _ := x["name"].(string)
	switch t {
	case "array":
		if x["items"] == nil {
			return nil, schemaErr("an array without items")
		}
		items, err := p.parse(x["items"])
		if err != nil {
			return nil, err
		}
		return &Schema{Type: t, Items: items, Logical: logical}, nil
	case "map":
		if x["values"] == nil {
			return nil, schemaErr("a map without values")
		}
		values, err := p.parse(x["values"])
		if err != nil {
			return nil, err
		}
		return &Schema{Type: t, Values: values, Logical: logical}, nil
	case "record", "error":
		return p.parseRecord(x, name, logical)
	case "enum":
		return p.parseEnum(x, t, name, logical)
	case "fixed":
		return p.parseFixed(x, t, name, logical)
	}
	if primitive[t] || p.named[t] != nil {
		s, err := p.parseNode(t)
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
	if x["type"] == nil {
		return nil, schemaErr("an object without a type")
	}
	return nil, schemaErr("unknown type %v", codecerr.JSONExcerpt(x["type"]))
}

// parseRecord parses a record (or error) and its fields; it is defined
// before its fields are parsed, so that it may refer to itself.
func (p *schemaParser) parseRecord(x map[string]any, name, logical string) (*Schema, error) {
	s := &Schema{Type: "record", Name: name, Logical: logical}
	// Defined before the fields: a record may refer to itself.
	if err := p.define(s); err != nil {
		return nil, err
	}
	fields, ok := x["fields"].([]any)
	if !ok {
		return nil, schemaErr("record %q has no list of fields", name)
	}
	seen := make(map[string]bool, len(fields))
	for i, f := range fields {
		fm, _ := f.(map[string]any)
		fname, _ := fm["name"].(string)
		if fname == "" {
			return nil, schemaErr("record %q: field %d has no name", name, i)
		}
		if seen[fname] {
			return nil, schemaErr("record %q has two fields named %q", name, fname)
		}
		seen[fname] = true
		if fm["type"] == nil {
			return nil, schemaErr("record %q: field %q has no type", name, fname)
		}
		ft, err := p.parse(fm["type"])
		if err != nil {
			return nil, inSchema(err, "record %q, field %q", name, fname)
		}
		s.Fields = append(s.Fields, Field{Name: fname, Type: ft})
	}
	return s, nil
}

// parseEnum parses an enum and its symbols.
func (p *schemaParser) parseEnum(x map[string]any, t, name, logical string) (*Schema, error) {
	s := &Schema{Type: t, Name: name, Logical: logical}
	syms, ok := x["symbols"].([]any)
	if !ok {
		return nil, schemaErr("enum %q has no list of symbols", name)
	}
	seen := make(map[string]bool, len(syms))
	for i, sym := range syms {
		str, ok := sym.(string)
		if !ok || str == "" {
			return nil, schemaErr("enum %q: symbol %d is not a name", name, i)
		}
		if seen[str] {
			return nil, schemaErr("enum %q lists the symbol %q twice", name, str)
		}
		seen[str] = true
		s.Symbols = append(s.Symbols, str)
	}
	if err := p.define(s); err != nil {
		return nil, err
	}
	return s, nil
}

// parseFixed parses a fixed and checks its size.
func (p *schemaParser) parseFixed(x map[string]any, t, name, logical string) (*Schema, error) {
	num, ok := x["size"].(json.Number)
	if !ok {
		return nil, schemaErr("fixed %q has no size", name)
	}
	size, err := num.Int64()
	if err != nil || size < 0 || size > maxFixedSize {
		return nil, schemaErr("fixed %q has size %s, not a whole number of bytes from 0 to %d", name, num, maxFixedSize)
	}
	s := &Schema{Type: t, Name: name, Size: int(size), Logical: logical}
	if err := p.define(s); err != nil {
		return nil, err
	}
	return s, nil
}

// check establishes, for every node of s not checked before, that its
// values can end, and whether they take any bytes. A record whose every
// value holds another value of a record without a way out (a field of its
// own type, say, or of a record that holds it) could never be read to its
// end, only recursed into: it is refused, naming it. The work is linear in
// the nodes not yet checked, whatever the peer's schema looks like.
func check(s *Schema) error {
	// The nodes not yet checked, each once, and who depends on each.
	var nodes []*Schema
	index := map[*Schema]int{}
	var parents [][]int
	visit := func(n *Schema) int {
		if n.checked {
			return -1
		}
		if i, ok := index[n]; ok {
			return i
		}
		index[n] = len(nodes)
		nodes = append(nodes, n)
		parents = append(parents, nil)
		return len(nodes) - 1
	}
	visit(s)
	// pending counts, for each record, the fields not yet known to end;
	// a union needs one branch that ends. A node ends when its count is 0.
	pending := make([]int, 0, 16)
	ends := make([]bool, 0, 16)
	var queue []int
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		var kids []*Schema
		switch {
		case n.Type == "union":
			kids = n.Branches
		case n.Type == "record" && !n.isArray():
			for _, f := range n.Fields {
				kids = append(kids, f.Type)
			}
		case n.Type == "array":
			visit(n.Items) // an empty array ends: no dependency
		case n.Type == "map":
			visit(n.Values)
		}
		need := 0
		for _, k := range kids {
			if j := visit(k); j >= 0 {
				parents[j] = append(parents[j], i)
				need++
			}
		}
		if n.Type == "union" && need < len(kids) {
			need = 0 // a branch checked before ends
		} else if n.Type == "union" && need > 0 {
			need = 1
		}
		pending = append(pending, need)
		ends = append(ends, need == 0)
		if need == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, p := range parents[i] {
			if ends[p] {
				continue
			}
			if pending[p]--; pending[p] == 0 || nodes[p].Type == "union" {
				ends[p] = true
				queue = append(queue, p)
			}
		}
	}
	for i, n := range nodes {
		if !ends[i] && n.Type == "record" {
			return schemaErr("record %q can never end: each of its values holds another value of a record with no way out (no union, array or map on the way)", n.Name)
		}
	}
	// Records are now known to end, so no record reaches itself through
	// record fields alone and zeroSize's recursion is finite.
	memo := map[*Schema]bool{}
	for _, n := range nodes {
		n.zero = zeroSize(n, memo)
	}
	for _, n := range nodes {
		n.checked = true
	}
	return nil
}

// zeroSize reports whether values of s take no bytes: null, a fixed of
// size 0, a record (not the ndarray, whose layout has lengths) of such
// fields. Every other type writes at least one byte: a length, a count,
// a branch index. memo holds the answers so far.
func zeroSize(s *Schema, memo map[*Schema]bool) bool {
	if s.checked {
		return s.zero
	}
	switch s.Type {
	case "null":
		return true
	case "fixed":
		return s.Size == 0
	case "record":
		if s.isArray() {
			return false
		}
		if z, ok := memo[s]; ok {
			return z
		}
		memo[s] = false // a hand-built record that reaches itself: not zero
		for _, f := range s.Fields {
			if !zeroSize(f.Type, memo) {
				return false
			}
		}
		memo[s] = true
		return true
	}
	return false
}

// TakesNoBytes reports whether the values of s take no bytes in Avro's
// binary encoding: null, a fixed of size 0, a record of such fields (from
// what parsing established, or worked out for a schema built by hand). A
// reader of a stream need not wait for a byte of such a value.
func (s *Schema) TakesNoBytes() bool {
	if s.checked {
		return s.zero
	}
	switch s.Type {
	case "null", "fixed", "record":
		return zeroSize(s, map[*Schema]bool{})
	}
	return false
}

// ParseSchema parses one Avro schema from its JSON text.
// It fails with an *ndarray.Error wrapping ErrSchema for malformed or too dense JSON
// or a schema this package cannot use.
func ParseSchema(text string) (*Schema, error) {
	v, err := decodeJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	return (&schemaParser{named: map[string]*Schema{}}).parse(v)
}

// Names is a namespace of named types (records, enums, fixed), as the
// types of an Avro protocol share one: a schema parsed with it may refer to
// the types defined before it by name, and the types it defines join it.
// The zero value is an empty namespace, ready to use.
type Names struct {
	p schemaParser
}

// Parse parses and checks one schema from its JSON value, as encoding/json
// decodes it with UseNumber (a fixed's size is a json.Number). A name n
// already holds is refused, with ErrSchema: which of two definitions a
// reference means would be a guess. The named types of a schema that
// fails may remain in n; parse into a Clone to keep n as it was.
func (n *Names) Parse(v any) (*Schema, error) {
	if n.p.named == nil {
		n.p.named = map[string]*Schema{}
	}
	return n.p.parse(v)
}

// Clone returns a namespace holding the types of n (none, if n is nil),
// which takes further types without adding them to n.
func (n *Names) Clone() *Names {
	c := &Names{p: schemaParser{named: map[string]*Schema{}}}
	if n != nil {
		for name, s := range n.p.named {
			c.p.named[name] = s
		}
	}
	return c
}

// Lookup returns the named type called name, or nil if n has none.
func (n *Names) Lookup(name string) *Schema {
	if n == nil {
		return nil
	}
	return n.p.named[name]
}

// A JSON document from a peer may hold at most one value per
// jsonBytesPerValue of its bytes, and jsonValueSlack more, counting an
// object as jsonObjectValues: decoding a value into Go allocates some 30
// to 110 bytes (a slot of a growing []any, a boxed number or string), and
// an object's map some 330 more, so that 16 MiB of "[]," became 400 MiB
// and 1 MiB of "0," 57 MiB. The protocols yaq daemons serve hold one per
// 12 to 14 bytes (11.6 written without spaces).
const (
	jsonBytesPerValue = 8
	jsonValueSlack    = 4096
	jsonObjectValues  = 4
)

// decodeJSON decodes JSON that may hold the bare NaN, Infinity and
// -Infinity tokens Python's json module writes (yaq protocols carry them in
// defaults), as null. JSON denser in values than real protocols are is
// refused before it is decoded, so that the Go values of a document are a
// small multiple of its bytes.
func decodeJSON(text []byte) (any, error) {
	clean, values := sanitizeJSON(text)
	if most := len(text)/jsonBytesPerValue + jsonValueSlack; values > most {
		return nil, schemaErr("the JSON holds %d values (an object counting as %d) in %d bytes, more than the %d (one per %d bytes and %d more) a schema or protocol may hold",
			values, jsonObjectValues, len(text), most, jsonBytesPerValue, jsonValueSlack)
	}
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.UseNumber() // a default of 2 is an int, 2.0 a double, as Python wrote them
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &ndarray.Error{Pkg: "avro", Err: ErrSchema, Offset: -1, Cause: err}
	}
	return v, nil
}

// sanitizeJSON replaces NaN, Infinity and -Infinity outside strings by
// null (returning text itself when there are none), and counts the values
// outside strings by the punctuation before them ([ and ,), objects as
// jsonObjectValues.
func sanitizeJSON(text []byte) (out []byte, values int) {
	var dirty bool // out holds text up to i, rewritten
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
			if dirty {
				out = append(out, c)
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', ',':
			values++
		case '{':
			values += jsonObjectValues
		case '-', 'I', 'N':
			replaced := false
			for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
				if bytes.HasPrefix(text[i:], []byte(tok)) {
					if !dirty {
						dirty = true
						out = append(make([]byte, 0, len(text)+len(text)/3+1), text[:i]...)
					}
					out = append(out, "null"...)
					i += len(tok) - 1
					replaced = true
					break
				}
			}
			if replaced {
				continue
			}
		}
		if dirty {
			out = append(out, c)
		}
	}
	if !dirty {
		return text, values
	}
	return out, values
}
