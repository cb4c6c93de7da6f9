package gr00tpolicy

import (
	"errors"
	"fmt"
	"strings"
)

// ModalityConfig is GR00T's gr00t.data.types.ModalityConfig: which steps
// of a modality (video, state, action, language) a policy samples and
// which keys it loads. A server answers get_modality_config with one per
// modality name. The JSON field names are GR00T's, so a file of them
// (ndpack gr00t serve --modality) reads as GR00T writes them.
type ModalityConfig struct {
	// DeltaIndices are the steps sampled relative to the current one.
	DeltaIndices []int `json:"delta_indices" msgpack:"delta_indices"`
	// ModalityKeys are the keys loaded for the modality ("video.cam0"); GR00T
	// requires at least one.
	ModalityKeys []string `json:"modality_keys" msgpack:"modality_keys"`
	// SinCosEmbeddingKeys and MeanStdEmbeddingKeys name the keys normalised
	// by sin/cos encoding and by mean and standard deviation; nil is
	// Python's None.
	SinCosEmbeddingKeys  []string `json:"sin_cos_embedding_keys" msgpack:"sin_cos_embedding_keys"`
	MeanStdEmbeddingKeys []string `json:"mean_std_embedding_keys" msgpack:"mean_std_embedding_keys"`
	// ActionConfigs, if not nil, has one entry for each of ModalityKeys.
	ActionConfigs []ActionConfig `json:"action_configs" msgpack:"action_configs"`
}

// ActionConfig is GR00T's ActionConfig: how an action key is represented.
// Its enumerations travel by their Python names, as
// gr00t.data.utils.to_json_serializable writes them.
type ActionConfig struct {
	// Rep is "RELATIVE", "DELTA" or "ABSOLUTE".
	Rep string `json:"rep" msgpack:"rep"`
	// Type is "EEF" or "NON_EEF".
	Type string `json:"type" msgpack:"type"`
	// Format is "DEFAULT", "XYZ_ROT6D" or "XYZ_ROTVEC".
	Format string `json:"format" msgpack:"format"`
	// StateKey is the state key the action is relative to; "" is None.
	StateKey string `json:"state_key" msgpack:"state_key"`
}

// The names of ActionConfig's enumerations, as GR00T defines them.
var (
	actionReps    = []string{"RELATIVE", "DELTA", "ABSOLUTE"}
	actionTypes   = []string{"EEF", "NON_EEF"}
	actionFormats = []string{"DEFAULT", "XYZ_ROT6D", "XYZ_ROTVEC"}
)

// Check reports what GR00T's ModalityConfig would refuse: no modality
// keys, action configs that do not match them one for one, or an
// enumeration name GR00T does not have.
func (m ModalityConfig) Check() error {
	if len(m.ModalityKeys) == 0 {
		return fmt.Errorf("gr00tpolicy: a modality config needs modality_keys (a non-empty list)")
	}
	if m.ActionConfigs != nil && len(m.ActionConfigs) != len(m.ModalityKeys) {
		return fmt.Errorf("gr00tpolicy: a modality config has %d action_configs for %d modality_keys", len(m.ActionConfigs), len(m.ModalityKeys))
	}
	for i, a := range m.ActionConfigs {
		for _, f := range []struct {
			name, v string
			names   []string
		}{{"rep", a.Rep, actionReps}, {"type", a.Type, actionTypes}, {"format", a.Format, actionFormats}} {
			if !contains(f.names, f.v) {
				return fmt.Errorf("gr00tpolicy: action_configs[%d].%s is %q, not one of %s", i, f.name, f.v, strings.Join(f.names, ", "))
			}
		}
	}
	return nil
}

func contains(names []string, v string) bool {
	for _, n := range names {
		if n == v {
			return true
		}
	}
	return false
}

// modalityClass is the key that marks a ModalityConfig on the wire.
const modalityClass = "__ModalityConfig_class__"

// wire is m as MsgSerializer writes it: {"__ModalityConfig_class__":
// True, "as_json": {...}}, its fields in the dataclass's order.
func (m ModalityConfig) wire() ordered {
	var actions any
	if m.ActionConfigs != nil {
		list := make([]any, len(m.ActionConfigs))
		for i, a := range m.ActionConfigs {
			list[i] = ordered{{"rep", a.Rep}, {"type", a.Type}, {"format", a.Format}, {"state_key", noneIfEmpty(a.StateKey)}}
		}
		actions = list
	}
	ints := make([]any, len(m.DeltaIndices))
	for i, d := range m.DeltaIndices {
		ints[i] = d
	}
	return ordered{{modalityClass, true}, {"as_json", ordered{
		{"delta_indices", ints},
		{"modality_keys", strs(m.ModalityKeys)},
		{"sin_cos_embedding_keys", strs(m.SinCosEmbeddingKeys)},
		{"mean_std_embedding_keys", strs(m.MeanStdEmbeddingKeys)},
		{"action_configs", actions},
	}}}
}

func noneIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// strs is a list of strings as a message value; nil stays nil (None).
func strs(s []string) any {
	if s == nil {
		return nil
	}
	list := make([]any, len(s))
	for i, v := range s {
		list[i] = v
	}
	return list
}

// parseModality reads a ModalityConfig from its wire form, as
// MsgSerializer's ModalityConfig(**obj["as_json"]) does; what GR00T would
// refuse is refused.
func parseModality(name string, v any) (ModalityConfig, error) {
	var m ModalityConfig
	obj, ok := v.(map[string]any)
	if !ok || obj[modalityClass] == nil {
		return m, fmt.Errorf("%w: the modality %s is %s, not a ModalityConfig", errMalformed, quote(name), kindOf(v))
	}
	fields, ok := obj["as_json"].(map[string]any)
	if !ok {
		return m, fmt.Errorf("%w: the modality %s has no as_json map", errMalformed, quote(name))
	}
	bad := func(field, want string) error {
		return fmt.Errorf("%w: the modality %s has %s = %s, not %s", errMalformed, quote(name), field, kindOf(fields[field]), want)
	}
	for k := range fields {
		switch k {
		case "delta_indices", "modality_keys", "sin_cos_embedding_keys", "mean_std_embedding_keys", "action_configs":
		default:
			return m, fmt.Errorf("%w: the modality %s has the field %s, which ModalityConfig does not", errMalformed, quote(name), quote(k))
		}
	}
	var err error
	if m.DeltaIndices, err = intList(fields["delta_indices"]); err != nil {
		return m, bad("delta_indices", "a list of integers")
	}
	if m.ModalityKeys, err = strList(fields["modality_keys"]); err != nil {
		return m, bad("modality_keys", "a list of strings")
	}
	if m.SinCosEmbeddingKeys, err = strList(fields["sin_cos_embedding_keys"]); err != nil {
		return m, bad("sin_cos_embedding_keys", "a list of strings or None")
	}
	if m.MeanStdEmbeddingKeys, err = strList(fields["mean_std_embedding_keys"]); err != nil {
		return m, bad("mean_std_embedding_keys", "a list of strings or None")
	}
	if m.ActionConfigs, err = actionList(fields["action_configs"]); err != nil {
		return m, fmt.Errorf("%w: the modality %s: %v", errMalformed, quote(name), err)
	}
	if m.DeltaIndices == nil {
		return m, bad("delta_indices", "a list of integers")
	}
	if err := m.Check(); err != nil {
		return m, fmt.Errorf("%w: the modality %s: %v", errMalformed, quote(name), strings.TrimPrefix(err.Error(), "gr00tpolicy: "))
	}
	return m, nil
}

// intList reads a list of integers; nil (None) is nil.
func intList(v any) ([]int, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errNotList
	}
	out := make([]int, 0, len(list))
	for _, x := range list {
		n, ok := asInt(x)
		if !ok {
			return nil, errNotList
		}
		out = append(out, n)
	}
	return out, nil
}

// strList reads a list of strings; nil (None) is nil.
func strList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errNotList
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, errNotList
		}
		out = append(out, s)
	}
	return out, nil
}

func actionList(v any) ([]ActionConfig, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("action_configs is %s, not a list", kindOf(v))
	}
	out := make([]ActionConfig, 0, len(list))
	for i, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("action_configs[%d] is %s, not a map", i, kindOf(x))
		}
		var a ActionConfig
		for _, f := range []struct {
			name string
			to   *string
			none bool
		}{{"rep", &a.Rep, false}, {"type", &a.Type, false}, {"format", &a.Format, false}, {"state_key", &a.StateKey, true}} {
			switch s := m[f.name].(type) {
			case string:
				*f.to = s
			case nil:
				if !f.none {
					return nil, fmt.Errorf("action_configs[%d] has no %s", i, f.name)
				}
			default:
				return nil, fmt.Errorf("action_configs[%d].%s is %s, not a string", i, f.name, kindOf(s))
			}
		}
		out = append(out, a)
	}
	return out, nil
}

var errNotList = errors.New("not a list")
