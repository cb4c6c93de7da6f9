package yaq

import (
	"github.com/ndpack/ndpack/yaq/avro"
)

// Protocol is a yaq daemon's Avro protocol, as it declares it (the .avpr
// JSON, served in the handshake): its name, traits and messages.
type Protocol struct {
	Name     string                   // the protocol's name, which id() answers as kind
	Traits   []string                 // the yaq traits it declares, such as "is-daemon"
	Messages map[string]*avro.Message // by name, the methods a client may call
	// ConfigDefaults are the defaults of the protocol's config fields, as
	// JSON decodes them (numbers as json.Number); fields without one are
	// left out.
	ConfigDefaults map[string]any
	JSON           string // the text it was parsed from
}

// ParseProtocol parses a protocol's JSON (bare NaN and Infinity, which
// Python writes in defaults, allowed) as avro.ParseProtocol does, and
// reads yaq's attributes of it: its traits and its config's defaults.
// It fails as avro.ParseProtocol does, with an *ndarray.Error wrapping
// avro.ErrSchema.
func ParseProtocol(text string) (*Protocol, error) {
	ap, err := avro.ParseProtocol(text)
	if err != nil {
		return nil, err
	}
	return protocolOf(ap, text), nil
}

// protocolOf reads yaq's attributes of ap, parsed from text.
func protocolOf(ap *avro.Protocol, text string) *Protocol {
	p := &Protocol{Name: ap.Name, Messages: ap.Messages, JSON: text, ConfigDefaults: map[string]any{}}
	if cfg, ok := ap.Properties["config"].(map[string]any); ok {
		for k, f := range cfg {
			if fm, ok := f.(map[string]any); ok {
				if def, has := fm["default"]; has && def != nil {
					p.ConfigDefaults[k] = def
				}
			}
		}
	}
	if traits, ok := ap.Properties["traits"].([]any); ok {
		for _, t := range traits {
			if s, ok := t.(string); ok {
				p.Traits = append(p.Traits, s)
			}
		}
	}
	return p
}
