package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// Messages count in English: "1 argument", "1 line", "1 byte", never
// "1 arguments".
func TestMessagesCountInEnglish(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	a, err := ndarray.FromRows([][]float64{{1, 2, 3}})
	require.NoError(t, err)
	f, err := os.Create(p("row.npy"))
	require.NoError(t, err)
	require.NoError(t, npybridge.Write(f, a))
	require.NoError(t, f.Close())

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", p("row.npy")}, "want IN and OUT, got 1 argument\n"},
		{[]string{"render", p("row.npy")}, "want IN and OUT, got 1 argument\n"},
		{[]string{"diff", p("row.npy")}, "want A and B, got 1 argument\n"},
		{[]string{"render", p("row.npy"), p("row.svg")}, "(1 line)"},
	} {
		r := cli(t, nil, c.args...)
		assert.NotEqual(t, 0, r.code, c.args)
		assert.Contains(t, r.stderr, c.want, c.args)
	}

	// One byte after a msgpack document.
	r := cli(t, nil, "convert", p("row.npy"), p("row.msgpack"))
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.WriteFile(p("extra.msgpack"), append(readFile(t, p("row.msgpack")), 0xc0), 0o644))
	r = cli(t, nil, "convert", p("extra.msgpack"), p("x.npy"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "1 byte after")
	assert.NotContains(t, r.stderr, "1 bytes")
}
