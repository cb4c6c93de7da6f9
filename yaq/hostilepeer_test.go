package yaq

import (
	"bufio"
	"context"
	"crypto/md5"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/internal/testutil/loopback"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDaemon is a hostile daemon: it shakes hands as yaqd-core does,
// serving protocol, and answers every call with value (after meta and a
// success flag). valueAt is where in the stream the client reads the first
// answer's value starts.
func fakeDaemon(t *testing.T, protocol string, value []byte) (addr string, valueAt int) {
	hash := md5.Sum([]byte(protocol))
	none := append([]byte{0x04, 0x02}, appendVarint(nil, int64(len(protocol)))...)
	none = append(append(append(none, protocol...), 0x02), hash[:]...)
	none = append(none, 0x00)
	first := framed(none, []byte{0x00}, []byte{0x00}, nil, nil)
	second := framed([]byte{0x00, 0x00, 0x00, 0x00}, []byte{0x00}, []byte{0x00}, nil, nil)
	answer := framed([]byte{0x00}, []byte{0x00}, value, nil)
	addr = loopback.Serve(t, func(conn net.Conn) {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(conn)
		for _, reply := range [][]byte{first, second} {
			if len(readFrames(br, 3)) < 3 { // request, meta, name
				return
			}
			conn.Write(reply)
		}
		for {
			// A call: meta, name, parameters, then an empty frame.
			for {
				f := readFrames(br, 1)
				if len(f) == 0 {
					return
				}
				if len(f[0]) == 0 {
					break
				}
			}
			if _, err := conn.Write(answer); err != nil {
				return
			}
		}
	})
	return addr, len(first) + len(second) + 10 + 4
}

// A daemon's protocol that ndpack cannot use fails Dial with an error
// naming the type, before any of it is used (a fixed without a size used
// to panic).
func TestClientRefusesHostileProtocols(t *testing.T) {
	for _, c := range []struct{ name, types, response, want string }{
		{"fixed without a size", `{"type": "fixed", "name": "blob"}`, `"blob"`,
			`avro: invalid schema: types[0]: fixed "blob" has no size`},
		{"fixed of 2^40 bytes", `{"type": "fixed", "name": "blob", "size": 1099511627776}`, `"blob"`,
			`avro: invalid schema: types[0]: fixed "blob" has size 1099511627776, not a whole number of bytes from 0 to 2147483647`},
		{"a record that holds itself", `{"type": "record", "name": "loop", "fields": [{"name": "next", "type": "loop"}]}`, `"loop"`,
			`avro: invalid schema: types[0]: record "loop" can never end: each of its values holds another value of a record with no way out (no union, array or map on the way)`},
		{"a union in a union", `{"type": "enum", "name": "e", "symbols": ["A"]}`, `["null", ["e", "int"]]`,
			`avro: invalid schema: message "get", response: union ["null",["e","int"]] holds the union [e, int] as a branch`},
		{"an undefined name", `{"type": "enum", "name": "e", "symbols": ["A"]}`, `"f"`,
			`avro: invalid schema: message "get", response: unknown type "f"`},
		{"a name defined twice", `{"type": "enum", "name": "e", "symbols": ["A"]}`, `{"type": "fixed", "name": "e", "size": 1}`,
			`avro: invalid schema: message "get", response: fixed "e": the name is defined twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			proto := `{"protocol": "evil", "types": [` + c.types + `], "messages": {"get": {"request": [], "response": ` + c.response + `}}}`
			addr, _ := fakeDaemon(t, proto, []byte{0x00})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			client, err := Dial(ctx, addr, nil)
			if err == nil {
				client.Close()
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, avro.ErrSchema)
			assert.EqualError(t, err, "yaq: "+addr+": the daemon's protocol: "+c.want)
		})
	}
}

// callHostile calls get on a fake daemon that answers value, a value of
// response, and returns the error and what the call cost in memory.
func callHostile(t *testing.T, response string, value []byte) (err error, addr string, valueAt int, allocated, grew uint64) {
	proto := `{"protocol": "evil", "messages": {"get": {"request": [], "response": ` + response + `}}}`
	addr, valueAt = fakeDaemon(t, proto, value)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	allocated, grew = hostile.HeapCost(func() {
		var v any
		err = c.Call(ctx, "get", nil, &v)
	})
	t.Logf("the call allocated %d KiB; the heap grew by %d KiB", allocated>>10, grew>>10)
	return err, addr, valueAt, allocated, grew
}

// 12 KB of array<array<null>> (3,000 arrays of 65,536 nulls: 3 GiB of
// []any) is refused: the items that take no bytes are capped for the whole
// value, not per array.
func TestClientBoundsItemsOfNoBytes(t *testing.T) {
	value := appendVarint(nil, 3000)
	for range 3000 {
		value = append(appendVarint(value, 65536), 0x00)
	}
	value = append(value, 0x00)
	require.Len(t, value, 12003)
	err, addr, valueAt, allocated, grew := callHostile(t, `{"type": "array", "items": {"type": "array", "items": "null"}}`, value)
	require.Error(t, err)
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	assert.EqualError(t, err, fmt.Sprintf("avro: too large at byte 6: array block claims 65536 items of null, which take no bytes; "+
		"a value may hold 65536 such items in all, and 65536 came before (in the array<array<null>> value from daemon %s, which starts at byte %d of the stream)", addr, valueAt))
	assert.Less(t, allocated, uint64(8<<20), "bytes allocated")
	assert.Less(t, grew, uint64(4<<20), "heap growth")
}

// An 18-byte answer whose first block count is -2^63 (which negation
// leaves negative) followed by a block of 2^40 nulls is refused at the
// count, before any item.
func TestClientRefusesMinInt64BlockCount(t *testing.T) {
	value := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00}
	value = append(appendVarint(value, 1<<40), 0x00)
	require.Len(t, value, 18)
	err, addr, valueAt, allocated, _ := callHostile(t, `{"type": "array", "items": "null"}`, value)
	require.Error(t, err)
	assert.ErrorIs(t, err, ndarray.ErrMalformed)
	assert.EqualError(t, err, fmt.Sprintf("avro: malformed value at byte 0: array block count is -2^63, which no number of items is "+
		"(in the array<null> value from daemon %s, which starts at byte %d of the stream)", addr, valueAt))
	assert.Less(t, allocated, uint64(1<<20), "bytes allocated")
}

// Counts and sizes of every sign are checked against the bytes that
// remain: the answer ends (the daemon sent no more), and each is refused
// with little memory spent.
func TestClientChecksEveryCount(t *testing.T) {
	for _, c := range []struct {
		name, response string
		value          []byte
		is             error
		detail         string
	}{
		{"a negative count of 2^40 ints", `{"type": "array", "items": "int"}`, append(appendVarint(nil, -(1<<40)), 0x00, 0x02, 0x00),
			ndarray.ErrTooLarge, "at byte 0: array block claims 1099511627776 items, more than the 67108864 bytes a value may take"},
		{"a block size of 2^40", `{"type": "array", "items": "int"}`, append(appendVarint(appendVarint(nil, -1), 1<<40), 0x02, 0x00),
			ndarray.ErrTooLarge, "at byte 1: array block of 1 item claims 1099511627776 bytes, more than the 67108864 a value may take"},
		{"a negative block size", `{"type": "array", "items": "null"}`, append(appendVarint(appendVarint(nil, -1), -5), 0x00),
			ndarray.ErrMalformed, "at byte 1: array block of 1 item claims a negative size (-5 bytes)"},
		{"a map of 2^40 entries", `{"type": "map", "values": "null"}`, append(appendVarint(nil, 1<<40), 0x00, 0x00),
			ndarray.ErrTooLarge, "at byte 0: map block claims 1099511627776 items, more than the 67108864 bytes a value may take"},
		{"2^40 dimensions", avro.ArraySchema, append(appendVarint(nil, -(1<<40)), 0x00, 0x00),
			ndarray.ErrMalformed, "at byte 0: shape claims 1099511627776 more dimensions after 0 (NumPy allows 32)"},
		{"a string of 2^40 bytes", `"string"`, appendVarint(nil, 1<<40),
			ndarray.ErrTooLarge, "at byte 0: string claims 1099511627776 bytes, more than the 67108864 a value may take"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err, _, _, allocated, _ := callHostile(t, c.response, c.value)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.is)
			assert.Contains(t, err.Error(), c.detail)
			assert.Less(t, allocated, uint64(1<<20), "bytes allocated")
		})
	}
}

// The Go memory a value decodes to is bounded by a small multiple of its
// bytes: 1 MiB of one-byte records (a map each) is refused, not decoded
// into some 350 MiB.
func TestClientBoundsDecodedMemory(t *testing.T) {
	const n = 1 << 20
	// avro.Schema.Decode's budget: 32 bytes per byte, and 16 MiB more.
	const decodedPerByte, decodedSlack = 32, 16 << 20
	value := appendVarint(nil, n)
	value = append(value, make([]byte, n)...)
	value = append(value, 0x00)
	err, _, _, allocated, _ := callHostile(t, `{"type": "array", "items": {"type": "record", "name": "r", "fields": [{"name": "on", "type": "boolean"}]}}`, value)
	require.Error(t, err)
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	assert.Contains(t, err.Error(), fmt.Sprintf("the value would take more than %d bytes of memory, decoded from %d bytes (at most %d per byte and %d more)",
		len(value)*decodedPerByte+decodedSlack, len(value), decodedPerByte, decodedSlack))
	assert.Less(t, allocated, uint64(len(value)*2*decodedPerByte+decodedSlack), "bytes allocated")
}
