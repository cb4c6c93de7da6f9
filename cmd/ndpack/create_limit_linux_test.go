package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// create under an address-space limit (as batch schedulers set) makes a
// file larger than the limit, since it never maps it; and a --force over
// an existing file replaces it only when the new one is complete. Before,
// create mapped the new file after renaming it into place: under such a
// limit (4 GiB here: 1 GiB is too little for a Go program's threads on a
// loaded machine) it failed with exit 1 and left the 16 GiB file there,
// the old one already gone.
func TestCreateUnderAddressSpaceLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.npy")
	old := []byte("the user's old file")
	require.NoError(t, os.WriteFile(p, old, 0o644))
	limited := func(args ...string) result {
		return runCmd(t, exec.Command("prlimit", append([]string{"--as=4294967296", ndpackBin}, args...)...), nil)
	}
	// ndpack itself runs under the limit.
	r := limited("create", filepath.Join(dir, "probe.npy"), "--dtype", "|u1", "--shape", "16")
	require.Equal(t, result{0, "", ""}, r, "ndpack does not start under a 4 GiB limit")

	r = limited("create", "--force", p, "--dtype", "<f8", "--shape", "2048,1024,1024")
	require.Equal(t, result{0, "", ""}, r)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	h := npybridge.AppendHeader(nil, ndarray.MustParseDType("<f8"), []int{2048, 1024, 1024})
	assert.Equal(t, int64(len(h))+16<<30, fi.Size())
	got := make([]byte, len(h))
	f, err := os.Open(p)
	require.NoError(t, err)
	_, err = f.ReadAt(got, 0)
	f.Close()
	require.NoError(t, err)
	assert.Equal(t, string(h), string(got))

	r = limited("create", filepath.Join(dir, "new.npy"), "--dtype", "<f8", "--shape", "2048,1024,1024")
	require.Equal(t, result{0, "", ""}, r)
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 3, "no temporary file left")
}
