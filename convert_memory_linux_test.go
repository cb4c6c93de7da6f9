package ndpack_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// TestStreamingConversionMemory converts a 256 MiB file each way in a child
// process and checks the child's peak resident memory (from rusage, not a
// timer) stays under 64 MiB, and that the converted files are exact.
func TestStreamingConversionMemory(t *testing.T) {
	if mode := os.Getenv("NDPACK_CONVERT_CHILD"); mode != "" {
		convertChild(t, mode, os.Getenv("NDPACK_IN"), os.Getenv("NDPACK_OUT"))
		return
	}
	if testing.Short() {
		t.Skip("writes 768 MiB of files")
	}
	const n = 256 << 20
	dir := t.TempDir()
	npyPath := filepath.Join(dir, "big.npy")
	writeBigNPY(t, npyPath, n)

	extPath := filepath.Join(dir, "big.ext")
	rss := runConvertChild(t, "npy2ext", npyPath, extPath)
	assert.Less(t, rss, int64(64<<20), "NPY -> ext 110 peak RSS")

	backPath := filepath.Join(dir, "back.npy")
	rss = runConvertChild(t, "ext2npy", extPath, backPath)
	assert.Less(t, rss, int64(64<<20), "ext 110 -> NPY peak RSS")

	assert.True(t, sameFiles(t, npyPath, backPath), "the round trip changed the file")
	fi, err := os.Stat(extPath)
	require.NoError(t, err)
	// ext32 header 6, map 1, "data" 5, bin32 header 5, "typestr" 8 + "<f8" 4,
	// "shape" 6 + array 1 + uint32 5, "version" 8 + 1: 50 bytes of framing.
	assert.Equal(t, int64(n+50), fi.Size())
}

func writeBigNPY(t *testing.T, path string, n int) {
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{n / 8}))
	chunk := make([]byte, 1<<20)
	for i := 0; i < n; i += len(chunk) {
		for j := range chunk {
			chunk[j] = byte((i + j) * 31 >> 3)
		}
		w.Write(chunk)
	}
	require.NoError(t, w.Flush())
}

func runConvertChild(t *testing.T, mode, in, out string) int64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamingConversionMemory$")
	cmd.Env = append(os.Environ(), "NDPACK_CONVERT_CHILD="+mode, "NDPACK_IN="+in, "NDPACK_OUT="+out)
	outb, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", outb)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	t.Logf("%s: peak RSS %.1f MiB", mode, float64(ru.Maxrss)/1024)
	return ru.Maxrss << 10 // Linux reports KiB
}

func convertChild(t *testing.T, mode, in, out string) {
	conv := ndpack.ConvertOptions{}.NPYToExt110
	if mode == "ext2npy" {
		conv = ndpack.ConvertOptions{}.Ext110ToNPY
	}
	convertFile(t, conv, in, out)
}

func sameFiles(t *testing.T, a, b string) bool {
	fa, err := os.Open(a)
	require.NoError(t, err)
	defer fa.Close()
	fb, err := os.Open(b)
	require.NoError(t, err)
	defer fb.Close()
	ba, bb := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, _ := io.ReadFull(fb, bb)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil {
			return na == nb
		}
	}
}
