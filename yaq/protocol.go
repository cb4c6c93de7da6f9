package yaq

import (
	"fmt"
	"sort"
)

// Protocol is a yaq daemon's Avro protocol, as it declares it (the .avpr
// JSON, served in the handshake): its name, traits and messages.
type Protocol struct {
	Name     string              // the protocol's name, which id() answers as kind
	Traits   []string            // the yaq traits it declares, such as "is-daemon"
	Messages map[string]*Message // by name, the methods a client may call
	// ConfigDefaults are the defaults of the protocol's config fields, as
	// JSON decodes them (numbers as json.Number); fields without one are
	// left out.
	ConfigDefaults map[string]any
	JSON           string // the text it was parsed from
}

// Message is one method of a protocol: its parameters and response.
type Message struct {
	Name     string
	Doc      string  // the protocol's doc text for it, "" if none
	Request  []Field // the parameters, in order
	Response *Schema // the answer's schema ("null" for none)
	Errors   *Schema // the union an error response holds ("string" first)
}

// ParseProtocol parses a protocol's JSON (bare NaN and Infinity, which
// Python writes in defaults, allowed).
func ParseProtocol(text string) (*Protocol, error) {
	v, err := decodeJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: a protocol is a JSON object", ErrSchema)
	}
	p := &Protocol{JSON: text, Messages: map[string]*Message{}, ConfigDefaults: map[string]any{}}
	if cfg, ok := top["config"].(map[string]any); ok {
		for k, f := range cfg {
			if fm, ok := f.(map[string]any); ok {
				if def, has := fm["default"]; has && def != nil {
					p.ConfigDefaults[k] = def
				}
			}
		}
	}
	p.Name, _ = top["protocol"].(string)
	if traits, ok := top["traits"].([]any); ok {
		for _, t := range traits {
			if s, ok := t.(string); ok {
				p.Traits = append(p.Traits, s)
			}
		}
	}
	sp := &schemaParser{named: map[string]*Schema{}}
	if types, ok := top["types"].([]any); ok {
		for _, t := range types {
			if _, err := sp.parse(t); err != nil {
				return nil, fmt.Errorf("types: %w", err)
			}
		}
	}
	msgs, _ := top["messages"].(map[string]any)
	names := make([]string, 0, len(msgs))
	for name := range msgs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m, _ := msgs[name].(map[string]any)
		msg := &Message{Name: name}
		msg.Doc, _ = m["doc"].(string)
		req, _ := m["request"].([]any)
		for _, f := range req {
			fm, _ := f.(map[string]any)
			fname, _ := fm["name"].(string)
			ft, err := sp.parse(fm["type"])
			if err != nil {
				return nil, fmt.Errorf("message %q, parameter %q: %w", name, fname, err)
			}
			def, hasDef := fm["default"]
			msg.Request = append(msg.Request, Field{Name: fname, Type: ft, Default: def, HasDefault: hasDef})
		}
		resp, err := sp.parse(m["response"])
		if err != nil {
			return nil, fmt.Errorf("message %q, response: %w", name, err)
		}
		msg.Response = resp
		errs := []any{"string"}
		if e, ok := m["errors"].([]any); ok {
			errs = append(errs, e...)
		}
		if msg.Errors, err = sp.parse(errs); err != nil {
			return nil, fmt.Errorf("message %q, errors: %w", name, err)
		}
		p.Messages[name] = msg
	}
	return p, nil
}
