package mpwalk

import (
	"bufio"
	"bytes"
	"testing"
	"testing/iotest"
	"unsafe"

	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message whose bulk follows a prefix of any length: the bytes of its
// first long bin, or the data inside its first long ext, land aligned to
// AlignTo, whether ReadInto makes the buffer, grows it or reuses one, and
// the message read is the message sent.
func TestReadIntoAlignsTheBulk(t *testing.T) {
	data := bytes.Repeat([]byte{0xab}, 64<<10)
	withPrefix := func(k int, body []byte) []byte {
		msg := mpwire.AppendMapHeader(nil, 2)
		msg = mpwire.AppendString(msg, string(bytes.Repeat([]byte{'k'}, k)))
		msg = append(msg, body...)
		return mpwire.AppendNil(mpwire.AppendString(msg, "end"))
	}
	bin := mpwire.AppendBytes(nil, data)
	// An ext 110 payload as YEP-110 writes it (data first), and with the
	// shape and typestr before the data.
	ext := func(dataFirst bool) []byte {
		m := mpwire.AppendMapHeader(nil, 3)
		if !dataFirst {
			m = mpwire.AppendString(m, "shape")
			m = mpwire.AppendArrayHeader(m, 2)
			m = mpwire.AppendInt(m, 128)
			m = mpwire.AppendInt(m, 64)
			m = mpwire.AppendString(m, "typestr")
			m = mpwire.AppendString(m, "<f8")
		}
		m = mpwire.AppendString(m, "data")
		m = mpwire.AppendBytes(m, data)
		if dataFirst {
			m = mpwire.AppendString(m, "shape")
			m = mpwire.AppendArrayHeader(m, 1)
			m = mpwire.AppendInt(m, 8192)
			m = mpwire.AppendString(m, "typestr")
			m = mpwire.AppendString(m, "<f8")
		}
		return append(mpwire.AppendExtHeader(nil, 110, len(m)), m...)
	}
	var reused []byte
	for _, body := range []struct {
		name string
		b    []byte
	}{{"bin", bin}, {"ext 110, data first", ext(true)}, {"ext 110, data last", ext(false)}} {
		for k := range 70 {
			msg := withPrefix(k, body.b)
			at := bytes.Index(msg, data)
			for _, src := range []struct {
				name string
				r    *bufio.Reader
				into []byte
			}{
				{"new buffer", bufio.NewReader(bytes.NewReader(msg)), nil},
				{"a byte at a time", bufio.NewReader(iotest.OneByteReader(bytes.NewReader(msg))), nil},
				{"reused buffer", bufio.NewReader(bytes.NewReader(msg)), reused},
			} {
				got, err := ReadInto(src.into, src.r, nil, 1<<30, Limits{MaxDepth: 8})
				require.NoError(t, err)
				require.True(t, bytes.Equal(msg, got), "%s, prefix %d, %s: the message", body.name, k, src.name)
				addr := uintptr(unsafe.Pointer(&got[at]))
				assert.Zero(t, addr%AlignTo, "%s, prefix %d, %s: bulk at %#x", body.name, k, src.name, addr)
				if src.into == nil {
					reused = got[:0]
				}
			}
		}
	}
	// Only the first long payload is placed: a second is wherever it
	// falls, and the message is still whole.
	two := mpwire.AppendArrayHeader(nil, 2)
	two = append(append(two, bin...), mpwire.AppendBytes(nil, data[:5000])...)
	got, err := ReadInto(nil, bufio.NewReader(bytes.NewReader(two)), nil, 1<<30, Limits{})
	require.NoError(t, err)
	assert.Equal(t, two, got)
	assert.Zero(t, uintptr(unsafe.Pointer(&got[1+5]))%AlignTo)
}

// bulkOffset finds the long str or bin among an ext's first bytes, and
// gives up, saying 0, on anything it cannot step over.
func TestBulkOffset(t *testing.T) {
	m := mpwire.AppendMapHeader(nil, 2)
	m = mpwire.AppendString(m, "shape")
	m = mpwire.AppendArrayHeader(m, 1)
	m = mpwire.AppendInt(m, 100000)
	m = mpwire.AppendString(m, "data")
	at := len(m) + 5 // a bin32 header
	m = mpwire.AppendBytes(m, make([]byte, 100000))
	assert.Equal(t, at, bulkOffset(m[:200], len(m)))
	assert.Equal(t, 0, bulkOffset(m[:at-1], len(m)), "the header cut off")
	assert.Equal(t, 0, bulkOffset(m[:200], 4*len(m)), "not most of the payload")
	assert.Equal(t, 0, bulkOffset([]byte{0xd4, 1, 2}, 1000), "an ext inside")
	assert.Equal(t, 0, bulkOffset(nil, 1000))
}
