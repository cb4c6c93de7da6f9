package yaq

import (
	"encoding/binary"
	"io"

	"github.com/ndpack/ndpack/internal/avrorpc"
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
	var o avrorpc.FrameWriter
	for _, p := range payloads {
		o.Add(p)
	}
	return o.Send(w)
}
