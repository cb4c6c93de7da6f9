// Package yaqproto compares yaq protocol files (Avro protocol JSON) in
// tests, for what makes two protocols the same protocol.
package yaqproto

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
)

var bareSpecial = regexp.MustCompile(`([\[:,]\s*)(-?Infinity|NaN)`)

// Comparable turns protocol JSON (with the bare NaN and Infinity yaq's
// Python writes) into a tree with numbers as written and without docs,
// links and installation, which may differ between equal protocols.
func Comparable(t testing.TB, text []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(bareSpecial.ReplaceAll(text, []byte(`$1"$2"`))))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("protocol JSON: %v", err)
	}
	return strip(v)
}

func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "doc" && k != "links" && k != "installation" {
				out[k] = strip(e)
			}
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = strip(e)
		}
	}
	return v
}
