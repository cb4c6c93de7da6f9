package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/npybridge"
)

// --level picks the deflate level of convert --compress: level 1 is larger
// than 9 on compressible data, both read back exactly; a level outside 1-9,
// or without --compress, is a usage error.
func TestConvertLevel(t *testing.T) {
	dir := t.TempDir()
	raw := make([]byte, 3<<20)
	for i := 0; i < len(raw)/2; i++ {
		x, y := i%512, i/512
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(1000+(x*y)%700+(x+y)/3+(i*7919)%13))
	}
	in := filepath.Join(dir, "cam.npy")
	hdr := "{'descr': '<i2', 'fortran_order': False, 'shape': (1572864,), }"
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	npy := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	npy = append(append(npy, hdr...), raw...)
	require.NoError(t, os.WriteFile(in, npy, 0o644))
	size := map[string]int64{}
	for _, level := range []string{"1", "9"} {
		out := filepath.Join(dir, "l"+level+".npz")
		r := cli(t, nil, "convert", "--compress", "--level", level, in, out)
		require.Equal(t, 0, r.code, r.stderr)
		fi, err := os.Stat(out)
		require.NoError(t, err)
		size[level] = fi.Size()
		back, err := npybridge.ReadOptions{}.ReadNPZFile(out)
		require.NoError(t, err)
		require.Len(t, back, 1)
		assert.Equal(t, raw, back[0].Array.Data, level)
	}
	assert.Less(t, size["9"], size["1"])
	for _, args := range [][]string{
		{"--compress", "--level", "0"},
		{"--compress", "--level", "10"},
		{"--level", "6"},
	} {
		r := cli(t, nil, append(append([]string{"convert"}, args...), in, filepath.Join(dir, "x.npz"))...)
		assert.Equal(t, 2, r.code, args)
		assert.Contains(t, r.stderr, "ndpack convert: --level", args)
	}
}
