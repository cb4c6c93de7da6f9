package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// Arrays at any depth of a message are members named by their paths (keys
// and list indices joined by "/"): inspect lists them, IN:PATH converts
// one, and a message holding one array converts without naming it.
func TestArraysNestedInMessages(t *testing.T) {
	dir := t.TempDir()
	a, _ := ndarray.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	b, _ := ndarray.FromSlice([]int16{5, 6})
	c, _ := ndarray.FromSlice([]uint8{7})
	request := map[string]any{"ver": "1.0", "id": 3, "method": "echo", "params": []any{a, map[string]any{"x": b, "n": 2}}}
	write := func(name string, v any, d dialect.Dialect) string {
		msg, err := ndpack.MessageOptions{Encoding: d}.MarshalMessage(v)
		require.NoError(t, err)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, msg, 0o644))
		return p
	}
	req := write("req.msgpack", request, 0)
	list := write("list.msgpack", []any{a, []any{b, c}}, dialect.MsgpackNumpy)
	one := write("one.msgpack", map[string]any{"prompt": "pick", "frame": map[string]any{"image": a}}, dialect.OpenPI)

	r := cli(t, nil, "inspect", req)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  params/0:\n    dtype     <f4")
	assert.Contains(t, r.stdout, "  params/1/x:\n    dtype     <i2")
	r = cli(t, nil, "inspect", list)
	require.Equal(t, 0, r.code, r.stderr)
	for _, path := range []string{"0", "1/0", "1/1"} {
		assert.Contains(t, r.stdout, "  "+path+":\n", path)
	}

	for _, c := range []struct {
		in   string
		want *ndarray.Array
	}{{req + ":params/1/x", b}, {list + ":1/1", c}, {list + ":0", a}, {one, a}, {one + ":frame/image", a}} {
		out := filepath.Join(dir, "out.npy")
		r := cli(t, nil, "convert", c.in, out)
		require.Equal(t, 0, r.code, "%s: %s", c.in, r.stderr)
		got, err := npybridge.ReadFile(out)
		require.NoError(t, err)
		assert.True(t, c.want.Equal(got), "%s gave %v", c.in, got)
	}
	r = cli(t, nil, "convert", req, filepath.Join(dir, "two.npy"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "2 arrays (params/0, params/1/x): an .npy holds one")
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"))
}
