package avro

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Schemas a peer may send that ndpack cannot use are refused when parsed,
// each with an error naming the type, before any value is decoded with
// them.
func TestParseSchemaRefusals(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type": "fixed", "name": "MD5"}`, `fixed "MD5" has no size`},
		{`{"type": "fixed", "name": "MD5", "size": "16"}`, `fixed "MD5" has no size`},
		{`{"type": "fixed", "name": "MD5", "size": -1}`, `fixed "MD5" has size -1, not a whole number of bytes from 0 to 2147483647`},
		{`{"type": "fixed", "name": "MD5", "size": 2.5}`, `fixed "MD5" has size 2.5, not a whole number of bytes from 0 to 2147483647`},
		{`{"type": "fixed", "name": "MD5", "size": 99999999999999999999}`, `fixed "MD5" has size 99999999999999999999, not a whole number of bytes from 0 to 2147483647`},
		{`{"type": "fixed", "size": 16}`, `a fixed without a name`},
		{`"decimal"`, `unknown type "decimal"`},
		{`{"type": "uuid"}`, `unknown type "uuid"`},
		{`{"items": "int"}`, `an object without a type`},
		{`{"type": "array"}`, `an array without items`},
		{`{"type": "map"}`, `a map without values`},
		{`[]`, `a union without branches, which no value fits`},
		{`["null", ["int", "string"]]`, `union ["null",["int","string"]] holds the union [int, string] as a branch`},
		{`["null", "int", "null"]`, `union ["null","int","null"] holds null twice`},
		{`[{"type": "array", "items": "int"}, {"type": "array", "items": "string"}]`, `union [{"items":"int","type":"array"},{"items":"string","type":"array"}] holds array<string> twice`},
		{`{"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "long"}]}`, `record "r" has two fields named "a"`},
		{`{"type": "record", "name": "r", "fields": [{"type": "int"}]}`, `record "r": field 0 has no name`},
		{`{"type": "record", "name": "r", "fields": [{"name": "a"}]}`, `record "r": field "a" has no type`},
		{`{"type": "record", "name": "r"}`, `record "r" has no list of fields`},
		{`{"type": "record", "name": "r", "fields": [{"name": "a", "type": {"type": "record", "name": "r", "fields": []}}]}`,
			`record "r": the name is defined twice`},
		{`{"type": "record", "name": "int", "fields": []}`, `record "int": the name is defined twice`},
		{`{"type": "record", "name": "r", "fields": [{"name": "a", "type": "s"}]}`, `invalid schema: record "r", field "a": unknown type "s"`},
		{`{"type": "enum", "name": "e", "symbols": ["A", "A"]}`, `enum "e" lists the symbol "A" twice`},
		{`{"type": "enum", "name": "e", "symbols": ["A", 1]}`, `enum "e": symbol 1 is not a name`},
		{`{"type": "enum", "name": "e"}`, `enum "e" has no list of symbols`},
		{`{"type": "record", "name": "self", "fields": [{"name": "me", "type": "self"}]}`, `record "self" can never end`},
		{`{"type": "record", "name": "a", "fields": [{"name": "b", "type": {"type": "record", "name": "b", "fields": [{"name": "a", "type": ["a"]}]}}]}`,
			`record "a" can never end`},
		{strings.Repeat(`{"type": "array", "items": `, 70) + `"int"` + strings.Repeat(`}`, 70), `nested more than 64 deep`},
	} {
		t.Run(c.want, func(t *testing.T) {
			_, err := ParseSchema(c.schema)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSchema)
			assert.Contains(t, err.Error(), c.want)
			assert.True(t, strings.HasPrefix(err.Error(), "avro: invalid schema: "), err.Error())
		})
	}
}

// The schemas the refusals must not catch: recursion with a way out, a
// type used again by name, an empty record, a fixed of size 0.
func TestParseSchemaAccepts(t *testing.T) {
	for _, c := range []struct {
		schema string
		zero   bool
	}{
		{`{"type": "record", "name": "node", "fields": [{"name": "next", "type": ["null", "node"]}]}`, false},
		{`{"type": "record", "name": "tree", "fields": [{"name": "kids", "type": {"type": "array", "items": "tree"}}]}`, false},
		{`{"type": "record", "name": "m", "fields": [{"name": "kids", "type": {"type": "map", "values": "m"}}]}`, false},
		{`{"type": "record", "name": "pair", "fields": [{"name": "a", "type": {"type": "fixed", "name": "h", "size": 16}}, {"name": "b", "type": "h"}]}`, false},
		{`{"type": "record", "name": "nothing", "fields": [{"name": "a", "type": "null"}, {"name": "b", "type": {"type": "fixed", "name": "z", "size": 0}}]}`, true},
		{`{"type": "record", "name": "empty", "fields": []}`, true},
		{`"null"`, true},
		{ArraySchema, false},
		{`{"type": "record", "name": "ndarray", "fields": []}`, false},
		{`["null", "int", "long", "string", {"type": "array", "items": "int"}, {"type": "map", "values": "int"}, {"type": "enum", "name": "e", "symbols": ["A"]}, {"type": "fixed", "name": "f", "size": 1}]`, false},
	} {
		s, err := ParseSchema(c.schema)
		require.NoError(t, err, c.schema)
		assert.Equal(t, c.zero, s.TakesNoBytes(), c.schema)
	}
	// A protocol whose type refers to itself through a union.
	p, err := ParseProtocol(`{"protocol": "nest", "types": [{"type": "record", "name": "node", "fields": [{"name": "next", "type": ["null", "node"]}]}, ` +
		ArraySchema + `], "messages": {"depth": {"request": [{"name": "n", "type": ["null", "node"]}], "response": "int"}}}`)
	require.NoError(t, err)
	assert.Equal(t, []string{"node", "ndarray"}, []string{p.Types[0].Name, p.Types[1].Name})
}

// A schema a peer made to be costly to walk (records of ten fields of the
// record before, 40 deep: 10^40 paths) is checked in time linear in its
// types, and a value of it that would take no bytes decodes within the
// memory budget or is refused.
func TestParseSchemaLinearInTypes(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"protocol": "wide", "types": [{"type": "record", "name": "r0", "fields": []}`)
	for i := 1; i <= 40; i++ {
		b.WriteString(`, {"type": "record", "name": "r` + strconv.Itoa(i) + `", "fields": [`)
		for f := range 10 {
			if f > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`{"name": "f` + strconv.Itoa(f) + `", "type": "r` + strconv.Itoa(i-1) + `"}`)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`], "messages": {"get": {"request": [], "response": "r40"}}}`)
	p, err := ParseProtocol(b.String())
	require.NoError(t, err)
	s := p.Messages["get"].Response
	assert.True(t, s.TakesNoBytes())
	_, _, err = s.Decode(nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	assert.Contains(t, err.Error(), fmt.Sprintf("the value would take more than %d bytes of memory, decoded from 0 bytes", decodedSlack))
}
