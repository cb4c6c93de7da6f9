package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/codecerr"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		doc     string
		size    int64
		depth   int
		wantErr string
	}{
		{`{"a": [1, [2]]}`, 100, 3, ""},
		{`{"a": [1, [2]]}`, 100, 2, "at byte 10: arrays and objects nest more than 2 deep"},
		{`{"a": "[[[[[[\"[[[["}`, 100, 1, ""},
		{`["\\", [[]]]`, 100, 2, "at byte 8: arrays and objects nest more than 2 deep"},
		{`[1, 2, 3]`, 8, 5, "at byte 8: 9 bytes, more than the 8 allowed"},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), 1000, 64, "at byte 64: arrays and objects nest more than 64 deep"},
	} {
		err := Check([]byte(c.doc), c.size, c.depth)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.doc, err)
		case c.wantErr != "" && (err == nil || err.Error() != c.wantErr):
			t.Errorf("%s: got %v, want %s", c.doc, err, c.wantErr)
		}
	}
	if err := Check([]byte("[1]"), 2, 5); !errors.Is(err, codecerr.ErrTooLarge) || errors.Is(err, codecerr.ErrTooDeep) {
		t.Errorf("a size error does not match ErrTooLarge: %v", err)
	}
	if err := Check([]byte("[[1]]"), 20, 1); errors.Is(err, codecerr.ErrTooLarge) || !errors.Is(err, codecerr.ErrTooDeep) {
		t.Errorf("a depth error matches ErrTooLarge or not ErrTooDeep: %v", err)
	}
}

// FuzzCheck holds Check to encoding/json: whatever Check lets through at
// depth d, json.Valid on a document nesting deeper is never reached, and a
// valid document's depth is what Check measures.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a": [1, {"b": "x]"}]}`, `"\"["`, `[[[]]]`, `{"k\\": [}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			Check(b, 1<<20, 4) // must not panic
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		d := depthOf(v)
		if err := Check(b, 1<<20, d); err != nil {
			t.Errorf("%q nests %d deep, Check refused it at that bound: %v", b, d, err)
		}
		if d > 0 && Check(b, 1<<20, d-1) == nil {
			t.Errorf("%q nests %d deep, Check let it through at %d", b, d, d-1)
		}
	})
}

func depthOf(v any) int {
	deepest := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			deepest = max(deepest, depthOf(e))
		}
		return deepest + 1
	case map[string]any:
		for _, e := range v {
			deepest = max(deepest, depthOf(e))
		}
		return deepest + 1
	}
	return 0
}
