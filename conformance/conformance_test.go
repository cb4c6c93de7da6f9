package conformance_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// ndpack is this module's codec, as the corpus tests it.
var ndpack = conformance.Codec{
	DecodeNPY: func(b []byte) (*ndarray.Array, error) { return npybridge.ReadOptions{}.Read(bytes.NewReader(b)) },
	EncodeNPY: func(a *ndarray.Array) ([]byte, error) {
		var buf bytes.Buffer
		err := npybridge.Write(&buf, a)
		return buf.Bytes(), err
	},
	DecodeExt110: ext110.Unmarshal,
	EncodeExt110: ext110.Options{AllowNonstandard: true}.Marshal,
}

func TestCorpus(t *testing.T) { conformance.Run(t, ndpack) }

// TestCorpusCounts keeps the corpus from shrinking unnoticed.
func TestCorpusCounts(t *testing.T) {
	m, err := conformance.Load()
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

// TestHarnessCatchesFaults runs the checks on deliberately broken codecs:
// a harness that passes everything would be worthless.
func TestHarnessCatchesFaults(t *testing.T) {
	checks, err := conformance.Checks()
	require.NoError(t, err)
	failures := func(c conformance.Codec, prefix string) (n int) {
		for _, ch := range checks {
			if !strings.HasPrefix(ch.Name, prefix) {
				continue
			}
			if err := ch.Run(c); err != nil && !errors.Is(err, conformance.ErrNotTested) {
				n++
			}
		}
		return n
	}
	lenient := conformance.Codec{DecodeExt110: func(b []byte) (*ndarray.Array, error) {
		if a, err := ext110.Unmarshal(b); err == nil {
			return a, nil
		}
		return ndarray.Scalar(int8(0)), nil
	}}
	m, _ := conformance.Load()
	extNegatives := 0
	for _, f := range m.Negative {
		if f.Format == "ext110" {
			extNegatives++
		}
	}
	assert.Equal(t, extNegatives, failures(lenient, "negative/"), "a decoder that accepts everything fails every ext negative")

	padded := ndpack
	padded.EncodeNPY = func(a *ndarray.Array) ([]byte, error) {
		var buf bytes.Buffer
		err := npybridge.Write(&buf, a)
		return append(buf.Bytes(), 0), err
	}
	assert.Equal(t, len(m.Valid), failures(padded, "valid/"), "an encoder with one extra byte fails every canonical .npy")
	assert.Zero(t, failures(ndpack, ""), "ndpack itself passes")
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
