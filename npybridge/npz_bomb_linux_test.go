package npybridge

import (
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// zerosBomb writes an archive whose one member, "a", is a <f8 array of n
// bytes of zeros deflated at speed: about 1.3 MB for 1 GiB.
func zerosBomb(t testing.TB, n int) string {
	npy := AppendHeader(nil, ndarray.DTypeOf[float64](), []int{n / 8})
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestSpeed)
	require.NoError(t, err)
	w.Write(npy)
	crc := crc32.ChecksumIEEE(npy)
	zeros := make([]byte, 1<<20)
	for done := 0; done < n; done += len(zeros) {
		w.Write(zeros)
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	require.NoError(t, w.Close())
	part := zipPart{name: "a.npy", method: zipDeflate, data: buf.Bytes(), usize: uint64(len(npy) + n), crc: crc}
	p := filepath.Join(t.TempDir(), "bomb.npz")
	require.NoError(t, os.WriteFile(p, honest(part), 0o644))
	return p
}

// Reading a zip bomb's member, 1 GiB of zeros from 1.3 MB, peaks no higher
// than numpy's np.load does: one allocation of the array, filled in place.
// Before, the member grew by doubling and peaked at 2 GiB (3 GiB in
// Fortran order). Measured in child processes, from rusage.
func TestZipBombPeakAgainstNumpy(t *testing.T) {
	if p := os.Getenv("NDPACK_BOMB_CHILD"); p != "" {
		arrays, err := ReadOptions{}.ReadNPZFile(p)
		if err != nil || len(arrays) != 1 || len(arrays[0].Array.Data) != 1<<30 {
			fmt.Println("child:", err)
			os.Exit(3)
		}
		return
	}
	if testing.Short() {
		t.Skip("decompresses 1 GiB twice, once in numpy")
	}
	if raceDetector {
		t.Skip("the race detector multiplies memory: RSS bounds do not hold under it")
	}
	pypeer.Require(t)
	p := zerosBomb(t, 1<<30)
	fi, err := os.Stat(p)
	require.NoError(t, err)

	cmd := exec.Command(os.Args[0], "-test.run=^TestZipBombPeakAgainstNumpy$")
	cmd.Env = append(os.Environ(), "NDPACK_BOMB_CHILD="+p)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	ours := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10

	res := pypeer.Run(t, `
import resource
import numpy as np
a = np.load(sys.argv[1])["a"]
assert a.shape == (1 << 27,) and a.dtype == np.float64
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
`, nil, p)
	theirs, err := strconv.ParseInt(strings.TrimSpace(string(res)), 10, 64)
	require.NoError(t, err, "%s", res)
	theirs <<= 10
	t.Logf("a %d-byte archive of 1 GiB of zeros: peak RSS ndpack %d MiB, numpy %d MiB", fi.Size(), ours>>20, theirs>>20)
	assert.LessOrEqual(t, ours, theirs, "peak RSS")
	assert.Less(t, ours, int64(1<<30+64<<20), "peak RSS: the array and little more")
}
