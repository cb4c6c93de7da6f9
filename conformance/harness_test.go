package conformance

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/corpus"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ndpack is this module's codec, as the corpus tests it.
var ndpack = Codec{
	DecodeNPY: func(b []byte) (*ndarray.Array, error) { return npybridge.Read(bytes.NewReader(b)) },
	EncodeNPY: func(a *ndarray.Array) ([]byte, error) {
		var buf bytes.Buffer
		err := npybridge.Write(&buf, a)
		return buf.Bytes(), err
	},
	DecodeExt110: ext110.Unmarshal,
	EncodeExt110: ext110.Options{AllowNonstandard: true}.Marshal,
}

func TestCorpus(t *testing.T) { Run(t, ndpack) }

// TestHarnessCatchesFaults runs the checks on deliberately broken codecs:
// a harness that passes everything would be worthless.
func TestHarnessCatchesFaults(t *testing.T) {
	all, err := checks()
	require.NoError(t, err)
	failures := func(c Codec, prefix string) (n int) {
		for _, ch := range all {
			if !strings.HasPrefix(ch.Name, prefix) {
				continue
			}
			if err := ch.run(c); err != nil && !errors.Is(err, errNotTested) {
				n++
			}
		}
		return n
	}
	lenient := Codec{DecodeExt110: func(b []byte) (*ndarray.Array, error) {
		if a, err := ext110.Unmarshal(b); err == nil {
			return a, nil
		}
		return ndarray.Scalar(int8(0)), nil
	}}
	m, _ := corpus.Load(FS())
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
