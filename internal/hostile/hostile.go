// Package hostile builds the msgpack inputs that a hostile peer sends to
// crash or swamp a decoder, for the module's tests: each entry point that
// decodes msgpack from outside is run over all of them and must return an
// error quickly, in bounded memory, with the process alive.
//
// The inputs are generated rather than stored: some are megabytes of
// repeated bytes.
package hostile

import (
	"bytes"
	"time"
)

// Input is one hostile msgpack message.
type Input struct {
	Name  string
	Bytes []byte
	// RPC is true for a whole yaq-RPC request (a map with ver, id, method
	// and params), which a server must answer rather than just refuse.
	RPC bool
}

// The bounds every entry point must keep on every Input, as the hostile-input
// issue sets them.
const (
	MaxTime       = time.Second
	AllocPerByte  = 4       // at most this many bytes allocated per input byte,
	AllocConstant = 1 << 20 // plus this
)

// MaxAlloc is the most an entry point may allocate while refusing in.
func MaxAlloc(in Input) uint64 { return uint64(len(in.Bytes))*AllocPerByte + AllocConstant }

// Inputs returns the hostile messages. Nested builds a request whose params
// nest levels one-element arrays.
func Inputs() []Input {
	return []Input{
		{Name: "array32 claiming 2^32-1 items", Bytes: []byte{0xdd, 0xff, 0xff, 0xff, 0xff}},
		{Name: "map32 claiming 2^32-1 pairs", Bytes: []byte{0xdf, 0xff, 0xff, 0xff, 0xff}},
		{Name: "146 maps each claiming a million pairs", Bytes: bytes.Repeat([]byte{0xdf, 0x00, 0x0f, 0x42, 0x40, 0xa0}, 146)},
		{Name: "16 maps each claiming a million pairs", Bytes: bytes.Repeat([]byte{0xdf, 0x00, 0x0f, 0x42, 0x40, 0xa0}, 16)},
		{Name: "bin32 claiming 4 GiB", Bytes: append([]byte{0xc6, 0xff, 0xff, 0xff, 0xff}, make([]byte, 10)...)},
		{Name: "request nesting 2,000,000 arrays", Bytes: NestedRequest(2000000), RPC: true},
		{Name: "request nesting 1,000,000 arrays", Bytes: NestedRequest(1000000), RPC: true},
		{Name: "10^7 nested arrays", Bytes: Nested(10000000)},
	}
}

// Nested returns levels one-element arrays, one inside the next, around 0.
func Nested(levels int) []byte {
	b := bytes.Repeat([]byte{0x91}, levels)
	return append(b, 0x00)
}

// NestedRequest returns a yaq-RPC request {ver, id: 1, method: "echo",
// params} whose params nest levels one-element arrays.
func NestedRequest(levels int) []byte {
	var b []byte
	b = append(b, 0x84, 0xa3, 'v', 'e', 'r', 0xa3, '1', '.', '0', 0xa2, 'i', 'd', 0x01)
	b = append(b, 0xa6, 'm', 'e', 't', 'h', 'o', 'd', 0xa4, 'e', 'c', 'h', 'o')
	b = append(b, 0xa6, 'p', 'a', 'r', 'a', 'm', 's')
	return append(b, Nested(levels)...)
}
