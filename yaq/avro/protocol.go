package avro

import (
	"sort"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Protocol is an Avro protocol (an .avpr), as its JSON declares it: its
// name, named types and messages, and the whole JSON object for the
// attributes Avro leaves to applications (yaq's traits, config and state).
type Protocol struct {
	Name      string              // the protocol's name ("protocol")
	Namespace string              // its namespace, "" if none
	Doc       string              // its doc text, "" if none
	Types     []*Schema           // the named types "types" declares, in order
	Messages  map[string]*Message // by name, the messages a client may send
	// Properties is the protocol's JSON object as it decodes (numbers
	// as json.Number; bare NaN, Infinity and -Infinity, which Python
	// writes in defaults, as nil), standard keys included.
	Properties map[string]any
}

// Message is one message of a protocol: its parameters, response and
// errors.
type Message struct {
	Name     string
	Doc      string  // the protocol's doc text for it, "" if none
	Request  []Field // the parameters, in order
	Response *Schema // the answer's schema ("null" for none)
	Errors   *Schema // the union an error response holds ("string" first)
}

// ParseProtocol parses a protocol's JSON text and checks every schema in
// it. Types may refer to the types before them, messages to all of them.
// JSON far denser in values than real protocols (more than one value per
// 8 bytes) is refused before it is decoded, so that what a peer sends
// decodes into at most a small multiple of its bytes.
// It fails with an *ndarray.Error wrapping ErrSchema for malformed or too dense
// JSON, a protocol that is not an object, or any schema it cannot use.
func ParseProtocol(text string) (*Protocol, error) {
	v, err := decodeJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, schemaErr("a protocol is a JSON object, not %s", codecerr.JSONExcerpt(v))
	}
	p := &Protocol{Messages: map[string]*Message{}, Properties: top}
	p.Name, _ = top["protocol"].(string)
	p.Namespace, _ = top["namespace"].(string)
	p.Doc, _ = top["doc"].(string)
	var names Names
	if types, ok := top["types"].([]any); ok {
		for i, t := range types {
			s, err := names.Parse(t)
			if err != nil {
				return nil, inSchema(err, "types[%d]", i)
			}
			p.Types = append(p.Types, s)
		}
	}
	msgs, _ := top["messages"].(map[string]any)
	order := make([]string, 0, len(msgs))
	for name := range msgs {
		order = append(order, name)
	}
	sort.Strings(order) // the first error found does not depend on map order
	for _, name := range order {
		m, _ := msgs[name].(map[string]any)
		msg := &Message{Name: name}
		msg.Doc, _ = m["doc"].(string)
		req, _ := m["request"].([]any)
		for _, f := range req {
			fm, _ := f.(map[string]any)
			fname, _ := fm["name"].(string)
			ft, err := names.Parse(fm["type"])
			if err != nil {
				return nil, inSchema(err, "message %q, parameter %q", name, fname)
			}
			def, hasDef := fm["default"]
			msg.Request = append(msg.Request, Field{Name: fname, Type: ft, Default: def, HasDefault: hasDef})
		}
		resp, err := names.Parse(m["response"])
		if err != nil {
			return nil, inSchema(err, "message %q, response", name)
		}
		msg.Response = resp
		// Every message may answer a string error, declared or not.
		errs := []any{"string"}
		if e, ok := m["errors"].([]any); ok {
			errs = append(errs, e...)
		}
		if msg.Errors, err = names.Parse(errs); err != nil {
			return nil, inSchema(err, "message %q, errors", name)
		}
		p.Messages[name] = msg
	}
	return p, nil
}
