package avrorpc

import (
	"encoding/binary"

	"github.com/ndpack/ndpack/yaq/avro"
)

// Schemas of the RPC's own values, as yaq's client and daemon read them.
var (
	metaSchema   = mustSchema(`{"type": "map", "values": "bytes"}`)
	stringSchema = mustSchema(`"string"`)
)

// frameOf frames p as yaq peers do: its length, big-endian, then p.
func frameOf(p []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(p))), p...)
}

// mustAppend encodes v, which the test knows fits s.
func mustAppend(s *avro.Schema, v any) []byte {
	b, err := s.Append(nil, v)
	if err != nil {
		panic(err)
	}
	return b
}
