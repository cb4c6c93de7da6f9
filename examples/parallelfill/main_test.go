package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The program, built as users build it, fills a 4096x1024 array with four
// worker processes; numpy loads exactly the values its own formula gives.
func TestParallelFillAgainstNumpy(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "parallelfill")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	npy := filepath.Join(dir, "dist.npy")

	cmd := exec.Command(bin, "-out", npy, "-rows", "4096", "-cols", "1024", "-workers", "4")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Regexp(t, "^"+regexp.QuoteMeta(npy)+`: 4096x1024 <f8 filled by 4 processes and verified in (\d+ms|\d+(\.\d+)?s)\n$`, stdout.String())
	assert.Empty(t, stderr.String())

	got := pypeer.Run(t, pypeer.Helpers+`
import sys
a = np.load(sys.argv[1])
i, j = np.ogrid[:4096, :1024]
want = ((i - 2048)**2 + (j - 512)**2).astype('<f8')
print(a.dtype.str, a.shape, np.array_equal(a, want), int((a != want).sum()), a[0, 0], a[2048, 512])
`, nil, npy)
	assert.Equal(t, "<f8 (4096, 1024) True 0 4456448.0 0.0\n", string(got))

	// A second run refuses to overwrite the result.
	cmd = exec.Command(bin, "-out", npy)
	stderr.Reset()
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	assert.Equal(t, "parallelfill: "+npy+" exists: -force replaces it, or choose another -out\n", stderr.String())
}

func TestValue(t *testing.T) {
	assert.Equal(t, 0.0, value(2, 3, 4, 6))
	assert.Equal(t, 13.0, value(0, 0, 4, 6))
}
