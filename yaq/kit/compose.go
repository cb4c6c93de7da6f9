package kit

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/yaqtoml"
	"github.com/ndpack/ndpack/yaq/avro"
)

// ErrDescription is what a daemon description that cannot be composed
// matches under errors.Is: a TOML syntax error, an unknown trait, a type
// that is not an Avro schema, a message declared twice with different
// signatures. The error names the file and the key.
var ErrDescription = errors.New("yaq: bad daemon description")

// Composed is a daemon's protocol as yaq-traits composes it from a
// description: the daemon's own fields, messages and properties over those
// of its traits and of the traits they require.
type Composed struct {
	// Name is the protocol's name, which id() answers as kind.
	Name string
	// Traits are the traits the protocol declares, those required included,
	// sorted.
	Traits []string
	// JSON is the protocol as yaq daemons serve it in the handshake (as
	// Python's json.dumps writes the .avpr: keys sorted, ", " and ": ").
	JSON string
	// Indented is the same protocol as yaq-traits writes .avpr files
	// (indented by four), which --protocol prints.
	Indented string

	tree   map[string]any
	config map[string]*avro.Schema // the config fields' types
	state  map[string]*avro.Schema // the state fields' types
}

// Tree returns a copy of the composed protocol as nested maps and slices,
// as a JSON decoder would give it (numbers as int64 or float64, null as
// nil).
func (c *Composed) Tree() map[string]any { return deepCopy(c.tree).(map[string]any) }

// ComposeTOML composes the daemon described by text, the TOML that yaq
// daemons publish beside their .avpr (protocol, doc, traits, config,
// state, messages, properties, types), as yaq-traits' compose does. file
// names the description in errors, which match ErrDescription and name the
// key at fault.
func ComposeTOML(file string, text []byte) (*Composed, error) {
	daemon, err := yaqtoml.Decode(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDescription, file, err)
	}
	return compose(file, daemon)
}

// ComposeTraits composes a protocol called name from traits alone, as a
// description listing only them would.
// It fails with an error matching ErrDescription for a trait it does not
// know.
func ComposeTraits(name string, traits ...string) (*Composed, error) {
	names := make([]any, len(traits))
	for i, t := range traits {
		names[i] = t
	}
	return compose(name, map[string]any{"protocol": name, "traits": names})
}

// descErr makes an error naming the description's file and the key.
func descErr(file, key, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s: %s", ErrDescription, file, key, fmt.Sprintf(format, args...))
}

// composeSections are the tables merged field by field; any other table
// is merged whole, tagged with the trait it came from.
var composeSections = map[string]bool{"config": true, "state": true, "messages": true, "properties": true}

// mergeInto merges src over dst as yaq-traits does: tables key by key,
// "types" appended, anything else replaced. origin, when set, tags each
// entry of a section (and each other top-level table) with its trait.
func mergeInto(dst, src map[string]any, origin string) {
	for _, k := range sortedKeys(src) {
		v := deepCopy(src[k])
		switch x := v.(type) {
		case map[string]any:
			old, _ := dst[k].(map[string]any)
			if old == nil {
				old = map[string]any{}
			}
			if composeSections[k] {
				mergeInto(old, x, origin)
			} else {
				mergeInto(old, x, "")
				if origin != "" {
					old["origin"] = origin
				}
			}
			dst[k] = old
		case []any:
			if k == "types" {
				for _, ty := range x {
					if m, ok := ty.(map[string]any); ok {
						fields, _ := m["fields"].([]any)
						for _, f := range fields {
							if fm, ok := f.(map[string]any); ok && fm["default"] == "__null__" {
								fm["default"] = nil
							}
						}
					}
				}
				old, _ := dst[k].([]any)
				dst[k] = append(old, x...)
				continue
			}
			dst[k] = x
		default:
			dst[k] = x
		}
	}
}

// compose follows yaq-traits' compose: the traits in the order a queue of
// them and their requirements gives, then the daemon over them, then the
// ndarray type, then checks, defaults and the properties' fields.
func compose(file string, daemon map[string]any) (*Composed, error) {
	daemon = deepCopy(daemon).(map[string]any)
	if err := checkTopLevel(file, daemon); err != nil {
		return nil, err
	}
	var todo []string
	for _, t := range daemon["traits"].([]any) {
		todo = append(todo, t.(string))
	}
	delete(daemon, "traits")
	out := map[string]any{}
	traitSet := map[string]bool{}
	addTraits := func(names []string) {
		for _, n := range names {
			traitSet[n] = true
		}
	}
	addTraits(todo)
	// Which trait declared each message first, to tell a daemon that
	// redeclares one differently.
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		t := allTraits[name]
		todo = append(todo, t.requires...)
		addTraits(todo)
		mergeInto(out, t.def, name)
	}
	if err := checkRedeclared(file, out, daemon); err != nil {
		return nil, err
	}
	mergeInto(out, daemon, "")
	delete(out, "trait")
	traits := slices.Sorted(maps.Keys(traitSet))
	ta := make([]any, len(traits))
	for i, t := range traits {
		ta[i] = t
	}
	out["traits"] = ta
	types, _ := out["types"].([]any)
	out["types"] = append(types, ndarrayTypeTree())

	c := &Composed{tree: out, Traits: traits, config: map[string]*avro.Schema{}, state: map[string]*avro.Schema{}}
	c.Name, _ = out["protocol"].(string)
	named, err := parseTypes(file, out["types"].([]any))
	if err != nil {
		return nil, err
	}
	if err := c.checkFields(file, named); err != nil {
		return nil, err
	}
	msgs, _ := out["messages"].(map[string]any)
	if err := checkMessages(file, named, msgs); err != nil {
		return nil, err
	}
	props, _ := out["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		p, err := fillProperty(file, name, props[name], msgs)
		if err != nil {
			return nil, err
		}
		props[name] = p
	}
	c.JSON = pyJSON(out, -1)
	c.Indented = pyJSON(out, 4)
	return c, nil
}

// checkFields checks the config and state fields' types and defaults and
// keeps their schemas.
func (c *Composed) checkFields(file string, named *avro.Names) error {
	for _, section := range []string{"config", "state"} {
		fields, _ := c.tree[section].(map[string]any)
		for _, k := range sortedKeys(fields) {
			f, ok := fields[k].(map[string]any)
			if !ok {
				return descErr(file, section+"."+k, "is %s, not a table", codecerr.JSONExcerpt(fields[k]))
			}
			if f["default"] == "__null__" {
				f["default"] = nil
			}
			s, err := fieldSchema(named, f)
			if err != nil {
				return descErr(file, section+"."+k+".type", "%s", schemaText(err))
			}
			if def, has := f["default"]; has {
				if _, err := checkValue(s, def, ""); err != nil {
					return descErr(file, section+"."+k+".default", "%v", err)
				}
			} else if section == "state" {
				return descErr(file, section+"."+k, "a state field needs a default")
			}
			if section == "config" {
				c.config[k] = s
			} else {
				c.state[k] = s
			}
		}
	}
	return nil
}

// checkMessages checks every message's request and response, giving them
// yaq-traits' defaults (an empty request, a null response).
func checkMessages(file string, named *avro.Names, msgs map[string]any) error {
	for _, name := range sortedKeys(msgs) {
		m, ok := msgs[name].(map[string]any)
		if !ok {
			return descErr(file, "messages."+name, "is %s, not a table", codecerr.JSONExcerpt(msgs[name]))
		}
		if resp, has := m["response"]; has {
			if _, err := named.Clone().Parse(resp); err != nil {
				return descErr(file, "messages."+name+".response", "%s", schemaText(err))
			}
		} else {
			m["response"] = "null"
		}
		req, has := m["request"]
		if !has {
			m["request"] = []any{}
			continue
		}
		params, ok := req.([]any)
		if !ok {
			return descErr(file, "messages."+name+".request", "is %s, not a list of parameters", codecerr.JSONExcerpt(req))
		}
		if err := checkParams(file, named, name, params); err != nil {
			return err
		}
	}
	return nil
}

// checkParams checks one message's parameters: named once each, of a
// type that parses, with a default of that type.
func checkParams(file string, named *avro.Names, message string, params []any) error {
	seen := map[string]bool{}
	for i, p := range params {
		key := fmt.Sprintf("messages.%s.request[%d]", message, i)
		pm, ok := p.(map[string]any)
		if !ok {
			return descErr(file, key, "is %s, not a table with a name and a type", codecerr.JSONExcerpt(p))
		}
		pname, _ := pm["name"].(string)
		if pname == "" {
			return descErr(file, key+".name", "a parameter needs a name")
		}
		if seen[pname] {
			return descErr(file, key+".name", "the parameter %q is declared twice", pname)
		}
		seen[pname] = true
		if pm["default"] == "__null__" {
			pm["default"] = nil
		}
		s, err := named.Clone().Parse(pm["type"])
		if err != nil {
			return descErr(file, key+".type", "%s", schemaText(err))
		}
		if def, has := pm["default"]; has {
			if _, err := checkValue(s, def, ""); err != nil {
				return descErr(file, key+".default", "%v", err)
			}
		}
	}
	return nil
}

// checkTopLevel checks the description's own keys before anything is
// merged, so that errors name what the author wrote.
func checkTopLevel(file string, d map[string]any) error {
	if p, ok := d["protocol"].(string); !ok || p == "" {
		return descErr(file, "protocol", "the daemon's kind, a string, is required")
	}
	traits, ok := d["traits"].([]any)
	if !ok {
		if d["traits"] == nil {
			return descErr(file, "traits", "a list of traits is required (at least \"is-daemon\")")
		}
		return descErr(file, "traits", "is %s, not a list of trait names", codecerr.JSONExcerpt(d["traits"]))
	}
	hasDaemon := false
	for i, t := range traits {
		name, _ := t.(string)
		if allTraits[name] == nil {
			return descErr(file, fmt.Sprintf("traits[%d]", i), "unknown trait %s (yaq's are %s)", codecerr.JSONExcerpt(t), strings.Join(traitNames(), ", "))
		}
		hasDaemon = hasDaemon || name == "is-daemon"
	}
	if !hasDaemon {
		return descErr(file, "traits", "every daemon has the trait \"is-daemon\"")
	}
	for _, k := range []string{"config", "state", "messages", "properties", "links", "installation"} {
		if v, has := d[k]; has {
			if _, ok := v.(map[string]any); !ok {
				return descErr(file, k, "is %s, not a table", codecerr.JSONExcerpt(v))
			}
		}
	}
	if v, has := d["types"]; has {
		if _, ok := v.([]any); !ok {
			return descErr(file, "types", "is %s, not a list of named types", codecerr.JSONExcerpt(v))
		}
	}
	return nil
}

// checkRedeclared refuses a daemon message that a trait declares with
// other parameters or another response: the trait's clients would call it
// as the trait says. Redeclaring it the same way (for a doc) is allowed.
func checkRedeclared(file string, traits, daemon map[string]any) error {
	mine, _ := daemon["messages"].(map[string]any)
	theirs, _ := traits["messages"].(map[string]any)
	for _, name := range sortedKeys(mine) {
		t, ok := theirs[name].(map[string]any)
		m, _ := mine[name].(map[string]any)
		if !ok || m == nil {
			continue
		}
		for _, part := range []string{"request", "response"} {
			a, has := m[part]
			if !has {
				continue
			}
			b, bHas := t[part]
			if !bHas {
				b = map[string]any{"request": []any{}, "response": "null"}[part]
			}
			if pyJSON(stripDocs(a), -1) != pyJSON(stripDocs(b), -1) {
				return descErr(file, "messages."+name+"."+part, "the message is declared twice: the trait %v declares its %s as %s", t["origin"], part, pyJSON(b, -1))
			}
		}
	}
	return nil
}

func stripDocs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "doc" {
				out[k] = stripDocs(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripDocs(e)
		}
		return out
	}
	return v
}

// schemaText says a schema error as a description's error does, after
// the file and the key: without the codec's "avro: " before it.
func schemaText(err error) string { return strings.TrimPrefix(err.Error(), "avro: ") }

// parseTypes parses the protocol's named types in order, each able to
// refer to those before it.
func parseTypes(file string, types []any) (*avro.Names, error) {
	var named avro.Names
	for i, t := range types {
		if _, err := named.Parse(t); err != nil {
			return nil, descErr(file, fmt.Sprintf("types[%d]", i), "%s", schemaText(err))
		}
	}
	return &named, nil
}

// fieldSchema parses a config or state field's type: its "type" when that
// is a schema by itself, or else the field as a whole (type "array" with
// its items beside it), as yaq-traits accepts both.
func fieldSchema(named *avro.Names, f map[string]any) (*avro.Schema, error) {
	if f["type"] == nil {
		return nil, errors.New("a field needs a type")
	}
	s, err := named.Clone().Parse(f["type"])
	if err == nil {
		return s, nil
	}
	whole := map[string]any{}
	for k, v := range f {
		if k != "default" && k != "doc" && k != "origin" {
			whole[k] = v
		}
	}
	if s, err2 := named.Clone().Parse(whole); err2 == nil {
		return s, nil
	}
	return nil, err
}

// propertyFields are a property's fields in the order yaq-traits' record
// of them lists them, with the default of each optional one.
var propertyFields = []struct {
	name    string
	def     any
	options []string
}{
	{"getter", nil, nil},
	{"setter", "__optional__", nil},
	{"options_getter", "__optional__", nil},
	{"units_getter", "__optional__", nil},
	{"limits_getter", "__optional__", nil},
	{"dynamic", true, nil},
	{"control_kind", nil, []string{"hinted", "normal", "omitted"}},
	{"record_kind", nil, []string{"data", "metadata", "omitted"}},
	{"type", nil, nil},
}

// fillProperty gives a property every field of yaq-traits' record, with
// defaults, and only those; the getters it names must be messages.
func fillProperty(file, name string, v any, msgs map[string]any) (map[string]any, error) {
	p, ok := v.(map[string]any)
	if !ok {
		return nil, descErr(file, "properties."+name, "is %s, not a table", codecerr.JSONExcerpt(v))
	}
	out := map[string]any{}
	for _, f := range propertyFields {
		key := "properties." + name + "." + f.name
		x, has := p[f.name]
		if !has || x == nil {
			switch f.def {
			case nil:
				return nil, descErr(file, key, "is required")
			case "__optional__":
				out[f.name] = nil
			default:
				out[f.name] = f.def
			}
			continue
		}
		switch f.name {
		case "dynamic":
			if _, ok := x.(bool); !ok {
				return nil, descErr(file, key, "is %s, not true or false", codecerr.JSONExcerpt(x))
			}
		default:
			s, ok := x.(string)
			if !ok {
				return nil, descErr(file, key, "is %s, not a string", codecerr.JSONExcerpt(x))
			}
			if f.options != nil && !slices.Contains(f.options, s) {
				return nil, descErr(file, key, "is %q, not one of %s", s, strings.Join(f.options, ", "))
			}
			if strings.HasSuffix(f.name, "getter") || f.name == "setter" {
				if _, ok := msgs[s]; !ok {
					return nil, descErr(file, key, "names %q, which is not a message", s)
				}
			}
		}
		out[f.name] = x
	}
	return out, nil
}

// ndarrayTypeTree is the record yaq defines for arrays (YEP-113), which
// compose appends to every protocol's types.
func ndarrayTypeTree() map[string]any {
	return map[string]any{
		"type": "record", "name": "ndarray", "logicalType": "ndarray",
		"fields": []any{
			map[string]any{"name": "shape", "type": map[string]any{"type": "array", "items": "int"}},
			map[string]any{"name": "typestr", "type": "string"},
			map[string]any{"name": "data", "type": "bytes"},
			map[string]any{"name": "version", "type": "int"},
		},
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	case []map[string]any: // TOML's arrays of tables
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// pyJSON writes v as Python's json.dumps does with sort_keys: indent < 0
// for one line (", " and ": "), else lines indented by indent; NaN and
// the infinities bare, floats as repr writes them, non-ASCII escaped.
func pyJSON(v any, indent int) string {
	var b strings.Builder
	writePyJSON(&b, v, indent, 0)
	return b.String()
}

func writePyJSON(b *strings.Builder, v any, indent, depth int) {
	newline := func(d int) {
		if indent >= 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*d))
		}
	}
	sep := ", "
	if indent >= 0 {
		sep = ","
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writePyString(b, x)
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		b.WriteString(pyFloat(x))
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(sep)
			}
			newline(depth + 1)
			writePyString(b, k)
			b.WriteString(": ")
			writePyJSON(b, x[k], indent, depth+1)
		}
		newline(depth)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			newline(depth + 1)
			writePyJSON(b, e, indent, depth+1)
		}
		newline(depth)
		b.WriteByte(']')
	default:
		writePyJSON(b, deepCopy(normalizeTree(v)), indent, depth)
	}
}

// normalizeTree turns the other Go values a tree may hold into those
// writePyJSON knows.
func normalizeTree(v any) any {
	switch x := v.(type) {
	case []map[string]any:
		return deepCopy(x)
	case float32:
		return float64(x)
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	}
	return fmt.Sprint(v)
}

// pyFloat writes f as Python's repr does: the shortest digits that read
// back, exponent form below 1e-4 and from 1e16, ".0" on whole numbers.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Python writes 1e-05 and 1e+16, as Go does; only a bare mantissa
		// differs in nothing.
		return s
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r == utf8.RuneError:
			fmt.Fprintf(b, `\u%04x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		}
	}
	b.WriteByte('"')
}
