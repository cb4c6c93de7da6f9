// Package hostile builds the msgpack inputs that a hostile peer sends to
// crash or swamp a decoder, for the module's tests: each entry point that
// decodes msgpack from outside is run over all of them and must return an
// error quickly, in bounded memory, with the process alive.
//
// The inputs are generated rather than stored: some are megabytes of
// repeated bytes.
//
// It also holds the attacks on a live server that the yaqrpc server and the
// yaq daemon (and the example daemons built on them) must each survive, so
// that each is written once and every server faces the same one: HoldOpen,
// Flood, FileLimit (on Linux); and what another process does to a file
// being read: TruncateFile.
package hostile

import (
	"bytes"
	"encoding/binary"
	"net"
	"runtime"
	"testing"
	"time"
)

// Input is one hostile msgpack message.
type Input struct {
	Name  string
	Bytes []byte
	// RPC is true for a whole yaq-RPC request (a map with ver, id, method
	// and params).
	RPC bool
	// Answer is what a yaq-RPC server with the default limits (64 MiB, 512
	// levels) says in its -32600 answer, or "" when it must close without
	// one: a message that claims more than the peer sent is still arriving
	// when the peer stops.
	Answer string
}

// The bounds every entry point must keep on every Input, as the hostile-input
// issue sets them. MaxTime bounds the CPU time the process spends on one
// (CPUTime), which a loaded machine does not stretch as it does the wall
// clock.
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
		{Name: "array32 claiming 2^32-1 items", Bytes: []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, Answer: tooLarge},
		{Name: "map32 claiming 2^32-1 pairs", Bytes: []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, Answer: tooLarge},
		{Name: "146 maps each claiming a million pairs", Bytes: bytes.Repeat([]byte{0xdf, 0x00, 0x0f, 0x42, 0x40, 0xa0}, 146), Answer: tooLarge},
		{Name: "16 maps each claiming a million pairs", Bytes: bytes.Repeat([]byte{0xdf, 0x00, 0x0f, 0x42, 0x40, 0xa0}, 16)},
		{Name: "bin32 claiming 4 GiB", Bytes: append([]byte{0xc6, 0xff, 0xff, 0xff, 0xff}, make([]byte, 10)...), Answer: tooLarge},
		{Name: "request nesting 2,000,000 arrays", Bytes: NestedRequest(2000000), RPC: true, Answer: tooDeep},
		{Name: "request nesting 1,000,000 arrays", Bytes: NestedRequest(1000000), RPC: true, Answer: tooDeep},
		{Name: "10^7 nested arrays", Bytes: Nested(10000000), Answer: tooDeep},
		{Name: "request of 3 million one-entry maps", Bytes: TinyMapsRequest(3000000), RPC: true, Answer: tooCostly},
		// Within the size limit, so only the bytes that arrive may cost
		// memory: a reader that sizes its buffer from the claim spends
		// 60 MiB on each of these.
		{Name: "bin32 claiming 60 MiB, 10 bytes sent", Bytes: Claim(0xc6, 10)},
		{Name: "str32 claiming 60 MiB, 10 bytes sent", Bytes: Claim(0xdb, 10)},
		{Name: "ext32 claiming 60 MiB, 1 MiB sent", Bytes: Claim(0xc9, 1<<20)},
		{Name: "request with a bin32 claiming 60 MiB, 100 KiB sent", Bytes: ClaimRequest(100 << 10), RPC: true},
	}
}

// ClaimRequest returns a yaq-RPC request whose one parameter is a bin32
// that claims 60 MiB, of which only sent bytes follow.
func ClaimRequest(sent int) []byte {
	return append(append(requestPrefix(), 0x91), Claim(0xc6, sent)...)
}

// PerHeldConnection is the most a server may spend on a connection that
// claims 60 MiB, sends a kilobyte and waits (its read buffer included).
const PerHeldConnection = 256 << 10

// HoldOpen opens peers connections to addr, sends msg (a claim the peer
// does not back) on each and leaves them open until t ends, and returns by
// how many bytes the process's heap grew once the server has read what
// there is. The server must run in the test's process.
func HoldOpen(t testing.TB, addr string, msg []byte, peers int) int64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range peers {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if _, err := conn.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // the server reads what there is, then waits
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// Claim returns a bin32, str32 or ext32 header (typ) that claims 60 MiB,
// followed by only sent bytes of it.
func Claim(typ byte, sent int) []byte {
	b := binary.BigEndian.AppendUint32([]byte{typ}, 60<<20)
	if typ == 0xc9 {
		b = append(b, 110) // the ext type
	}
	return append(b, make([]byte, sent)...)
}

const (
	tooLarge  = "exceeds the limit of 67108864 bytes"
	tooDeep   = "nested more than 512 deep"
	tooCostly = "more than 48 times as much"
)

// TinyMapsRequest returns a yaq-RPC request whose params are n maps of one
// entry ({"": nil}): 3 bytes each, which decoded into interface values
// take 350 bytes each.
func TinyMapsRequest(n int) []byte {
	b := requestPrefix()
	b = append(b, 0x91, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(b, bytes.Repeat([]byte{0x81, 0xa0, 0xc0}, n)...)
}

// Nested returns levels one-element arrays, one inside the next, around 0.
func Nested(levels int) []byte {
	b := bytes.Repeat([]byte{0x91}, levels)
	return append(b, 0x00)
}

// NestedRequest returns a yaq-RPC request {ver, id: 1, method: "echo",
// params} whose params nest levels one-element arrays.
func NestedRequest(levels int) []byte {
	return append(requestPrefix(), Nested(levels)...)
}

// requestPrefix is a request map up to its params value.
func requestPrefix() []byte {
	var b []byte
	b = append(b, 0x84, 0xa3, 'v', 'e', 'r', 0xa3, '1', '.', '0', 0xa2, 'i', 'd', 0x01)
	b = append(b, 0xa6, 'm', 'e', 't', 'h', 'o', 'd', 0xa4, 'e', 'c', 'h', 'o')
	return append(b, 0xa6, 'p', 'a', 'r', 'a', 'm', 's')
}
