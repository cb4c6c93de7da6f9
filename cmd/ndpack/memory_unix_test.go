//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// Compressing into an .npz streams each member through the deflater, in
// blocks on every core: a 512 MiB array converts in a few MiB, and inflates
// back into msgpack in as little (measured in a child process).
func TestCompressMemoryIsBounded(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector multiplies memory use")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "big.npy")
	header := npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{64 << 20})
	f, err := os.Create(in)
	require.NoError(t, err)
	f.Write(header)
	require.NoError(t, f.Truncate(int64(len(header))+512<<20)) // sparse zeros
	f.Close()
	// Through a small Python parent (measured): a child forked from this
	// test process would be charged the test's own peak.
	cmd, peak := measured(t, "convert", "--compress", in, filepath.Join(dir, "big.npz"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	rss := peak()
	t.Logf("convert --compress of 512 MiB: peak RSS %d KiB", rss/1024)
	assert.Less(t, rss, int64(64<<20))
	z, err := npybridge.OpenNPZFile(filepath.Join(dir, "big.npz"))
	require.NoError(t, err)
	defer z.Close()
	h, err := z.Header("big")
	require.NoError(t, err)
	assert.Equal(t, []int{64 << 20}, h.Shape)

	// And back: the 512 MiB member inflates into msgpack as it streams.
	cmd, peak = measured(t, "convert", filepath.Join(dir, "big.npz"), filepath.Join(dir, "big.msgpack"))
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	rss = peak()
	t.Logf("convert of the 512 MiB member to msgpack: peak RSS %d KiB", rss/1024)
	assert.Less(t, rss, int64(64<<20))
	fi, err := os.Stat(filepath.Join(dir, "big.msgpack"))
	require.NoError(t, err)
	assert.Greater(t, fi.Size(), int64(512<<20))
}

// inspect reads a file of any size in a few MiB: measured on a 2 GiB file
// (sparse, so that the test writes nothing), in a child process.
func TestInspectMemoryIsBounded(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector multiplies memory use")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "big.npy")
	header := npybridge.AppendHeader(nil, ndarray.MustParseDType("<f4"), []int{1 << 29})
	f, err := os.Create(p)
	require.NoError(t, err)
	_, err = f.Write(header)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(int64(len(header))+2<<30))
	require.NoError(t, f.Close())
	if fi, err := os.Stat(p); err != nil || fi.Size() != int64(len(header))+2<<30 {
		t.Skipf("cannot make a 2 GiB sparse file here: %v", err)
	}
	cmd, peak := measured(t, "inspect", "--json", p) // see TestCompressMemoryIsBounded
	out, err := cmd.Output()
	require.NoError(t, err)
	rss := peak()
	t.Logf("inspect of a 2 GiB .npy: peak RSS %d KiB", rss/1024)
	assert.Less(t, rss, int64(64<<20))
	var rep []map[string]any
	require.NoError(t, json.Unmarshal(out, &rep))
	stats := rep[0]["arrays"].([]any)[0].(map[string]any)["stats"].(map[string]any)
	assert.Equal(t, 0.0, stats["max"])
}
