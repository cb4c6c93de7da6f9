package avro

import "testing"

// A value that does not fit its schema is named in Avro's words, not by
// its Go type ([]interface {}, map[string]interface {}).
func TestDoesNotFitNamesAvroKinds(t *testing.T) {
	double, err := ParseSchema(`"double"`)
	if err != nil {
		t.Fatal(err)
	}
	for msg, in := range map[string]any{
		"avro: value does not fit its schema: an array of 2 items is not a double": []any{1, 2},
		"avro: value does not fit its schema: a map of 1 entry is not a double":    map[string]any{"a": 1},
		"avro: value does not fit its schema: a string is not a double":            "x",
		"avro: value does not fit its schema: null is not a double":                nil,
	} {
		_, err := double.Append(nil, in)
		if err == nil || err.Error() != msg {
			t.Errorf("Append(%v): %v, want %q", in, err, msg)
		}
	}
}
