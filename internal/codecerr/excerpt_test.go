package codecerr

import (
	"strings"
	"testing"
)

// A value shows as its JSON, cut to 80 characters, or by its Go type when
// it has none.
func TestJSONExcerpt(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]any{"type": "enum", "symbols": []any{"a"}}, `{"symbols":["a"],"type":"enum"}`},
		{strings.Repeat("x", 100), `"` + strings.Repeat("x", 76) + "..."},
		{func() {}, "func()"},
	} {
		if got := JSONExcerpt(c.v); got != c.want {
			t.Errorf("JSONExcerpt(%T) = %q, want %q", c.v, got, c.want)
		}
	}
}
