package yaqtoml

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"
)

// treeOf builds a config or state map from fuzz bytes: each byte picks a
// kind (string, integer, float, boolean, array, table), the bytes after it
// give its content.
type treeOf struct{ b []byte }

func (g *treeOf) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *treeOf) bytes(n int) []byte {
	n = min(n, len(g.b))
	s := g.b[:n]
	g.b = g.b[n:]
	return s
}

func (g *treeOf) value(depth int) any {
	switch k := g.byte() % 6; {
	case k == 0:
		return string(g.bytes(int(g.byte() % 12)))
	case k == 1:
		return int64(binary.LittleEndian.Uint64(append(g.bytes(8), make([]byte, 8)...)))
	case k == 2:
		return math.Float64frombits(binary.LittleEndian.Uint64(append(g.bytes(8), make([]byte, 8)...)))
	case k == 3 || depth > 5:
		return g.byte()%2 == 0
	case k == 4:
		a := []any{}
		for n := g.byte() % 5; n > 0 && len(g.b) > 0; n-- {
			a = append(a, g.value(depth+1))
		}
		return a
	}
	return g.table(depth + 1)
}

func (g *treeOf) table(depth int) map[string]any {
	m := map[string]any{}
	for n := g.byte() % 5; n > 0 && len(g.b) > 0; n-- {
		m[string(g.bytes(int(g.byte()%6)))] = g.value(depth)
	}
	return m
}

// plain makes decoded and built values comparable: arrays of tables as
// []any, NaN as a string.
func plain(v any) any {
	switch x := v.(type) {
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case float64:
		if math.IsNaN(x) {
			return "NaN"
		}
	}
	return v
}

// FuzzMarshal: every map Marshal writes, Decode reads back equal, and
// whatever it refuses, it refuses with an error.
func FuzzMarshal(f *testing.F) {
	f.Add([]byte("\x04\x05\x00\x03a\x07b\x01c"))
	f.Add([]byte("\x03\x00\x00\x05\x02\x00\x04\x04\x05\x01\x00\x01x"))
	f.Add([]byte("\x02\x01a\x04\x03\x00\x02xy\x05\x01\x00\x03\x01"))
	f.Add([]byte("\x01\x00\x00\x05\x01\x00\x00\x03\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &treeOf{b: b}
		m := g.table(0)
		text, err := Marshal(m)
		if err != nil {
			return
		}
		back, err := Decode(text)
		if err != nil {
			t.Fatalf("Marshal wrote what Decode refuses: %v\n%q\n%s", err, m, text)
		}
		if !reflect.DeepEqual(plain(m), plain(back)) {
			t.Fatalf("read back changed:\n%#v\n%#v\n%s", m, back, text)
		}
	})
}
