package avro

import (
	"encoding/binary"
	"runtime"
	"strings"
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
func (s *Schema) mustAppend(v any) []byte {
	b, err := s.Append(nil, v)
	if err != nil {
		panic(err)
	}
	return b
}

// heapCost runs f and returns the bytes allocated meanwhile and how much
// the heap in use grew.
func heapCost(f func()) (allocated, grew uint64) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	if after.HeapInuse > before.HeapInuse {
		grew = after.HeapInuse - before.HeapInuse
	}
	return after.TotalAlloc - before.TotalAlloc, grew
}

// hugeProtocol is a protocol of about size bytes, nearly all "[],".
func hugeProtocol(size int) string {
	return `{"protocol": "evil", "messages": {}, "x": [` + strings.Repeat("[],", size/3) + `[]]}`
}
