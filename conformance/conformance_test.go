package conformance_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/internal/corpus"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// TestCorpusCounts keeps the corpus from shrinking unnoticed.
func TestCorpusCounts(t *testing.T) {
	m, err := corpus.Load(conformance.FS())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(m.Valid), 60)
	assert.GreaterOrEqual(t, len(m.Tolerated), 15)
	assert.GreaterOrEqual(t, len(m.Negative), 40)
	nonstandard := 0
	for _, c := range m.Valid {
		if !c.Standard {
			nonstandard++
		}
	}
	assert.Equal(t, 8, nonstandard)
	assert.NotEmpty(t, conformance.Seeds("npy"))
	assert.NotEmpty(t, conformance.Seeds("ext110"))
}

// TestCorpusIsReproducible regenerates the corpus with the reference peers
// and compares every byte with the committed one.
func TestCorpusIsReproducible(t *testing.T) {
	pypeer.Require(t)
	out := t.TempDir()
	cmd := exec.Command(pypeer.Python, "generate.py", out)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	var n int
	require.NoError(t, filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		got, _ := os.ReadFile(p)
		want, err := os.ReadFile(filepath.Join("testdata", rel))
		require.NoError(t, err, "%s is generated but not committed", rel)
		assert.True(t, bytes.Equal(want, got), "%s differs from the committed corpus", rel)
		n++
		return nil
	}))
	committed := 0
	filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			committed++
		}
		return nil
	})
	assert.Equal(t, committed, n, "the committed corpus has files the generator no longer writes")
}
