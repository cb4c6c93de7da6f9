package yaq

import (
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The HandshakeRequest record, for tests that write one field by field
// (a null meta, a meta of their own).
var handshakeRequest = mustSchema(`{"type": "record", "name": "HandshakeRequest", "fields": [
	{"name": "clientHash", "type": {"type": "fixed", "name": "MD5", "size": 16}},
	{"name": "clientProtocol", "type": ["null", "string"]},
	{"name": "serverHash", "type": "MD5"},
	{"name": "meta", "type": ["null", {"type": "map", "values": "bytes"}]}]}`)

// appendVarint appends v as an Avro long, which is Go's zigzag varint.
func appendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// writeFrames writes payloads, one frame each, in one write.
func writeFrames(w io.Writer, payloads [][]byte) error {
	var o avro.FrameWriter
	for _, p := range payloads {
		o.Add(p)
	}
	return o.Send(w)
}

// The codec's names this package once had are package avro's own: the
// same types, the same sentinels, the same answers.
func TestDeprecatedCodecNames(t *testing.T) {
	for _, pair := range [][2]error{{ErrSchema, avro.ErrSchema}, {ErrTruncated, avro.ErrTruncated}, {ErrMalformed, avro.ErrMalformed},
		{ErrDoesNotFit, avro.ErrDoesNotFit}, {ErrNonstandard, avro.ErrNonstandard}, {ErrLimit, avro.ErrLimit}} {
		assert.True(t, pair[0] == pair[1], "%v", pair[0])
	}
	var s *avro.Schema
	s, err := ParseSchema(ArraySchema)
	require.NoError(t, err)
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	b, err := AppendArray(nil, a)
	require.NoError(t, err)
	direct, err := s.Append(nil, a)
	require.NoError(t, err)
	assert.Equal(t, direct, b)
	back, n, err := DecodeArray(b)
	require.NoError(t, err)
	assert.Equal(t, len(b), n)
	assert.True(t, a.Equal(back))
	_, _, err = DecodeArray(b[:1])
	var e *Error
	require.True(t, errors.As(err, &e), "%v", err)
	assert.ErrorIs(t, err, ErrTruncated)
	var opts ArrayOptions = avro.ArrayOptions{AllowNonstandard: true}
	_, err = opts.AppendArray(nil, a)
	assert.NoError(t, err)
	assert.Equal(t, 3, ArrayVersion)
	p, err := ParseProtocol(`{"protocol": "p", "messages": {"m": {"request": [{"name": "x", "type": "int"}], "response": "null"}}}`)
	require.NoError(t, err)
	var m *Message = p.Messages["m"]
	var f Field = m.Request[0]
	assert.Equal(t, "x", f.Name)
}
