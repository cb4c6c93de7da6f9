package yaq

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nestDaemon serves a protocol with a recursive type, to be sent values
// nested without end.
func nestDaemon(t *testing.T) (*Daemon, string) {
	proto := `{"protocol": "nest", "types": [{"type": "record", "name": "node", "fields": [{"name": "next", "type": ["null", "node"]}]}, ` +
		ArraySchema + `], "messages": {"depth": {"request": [{"name": "n", "type": ["null", "node"]}], "response": "int"}, ` +
		`"echo": {"request": [{"name": "a", "type": "ndarray"}], "response": "ndarray"}, ` +
		`"id": {"request": [], "response": {"type": "map", "values": ["null", "string"]}}}}`
	d, err := NewDaemon("nest", proto)
	require.NoError(t, err)
	d.ErrorLog = log.New(io.Discard, "", 0)
	require.NoError(t, d.Handle("depth", func(_ context.Context, p []any) (any, error) {
		n := 0
		for v := p[0]; v != nil; v = v.(map[string]any)["next"] {
			n++
		}
		return n, nil
	}))
	require.NoError(t, d.Handle("echo", func(_ context.Context, p []any) (any, error) { return p[0], nil }))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	t.Cleanup(func() { d.Close() })
	return d, l.Addr().String()
}

func frameOf(p []byte) []byte {
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], uint32(len(p)))
	return append(h[:], p...)
}

// Hostile peers get a closed connection, in bounded time and memory, and the
// daemon keeps serving others.
func TestDaemonRefusesHostilePeers(t *testing.T) {
	d, addr := nestDaemon(t)
	ctx := context.Background()
	good, err := Dial(ctx, addr)
	require.NoError(t, err)
	defer good.Close()
	var spaces [16]byte
	for i := range spaces {
		spaces[i] = ' '
	}
	hs := append(append(append([]byte{}, spaces[:]...), 0x00), spaces[:]...)
	hs = append(hs, 0x02, 0x00)
	deep := append(bytes.Repeat([]byte{0x02}, 100000), 0x00) // 100,000 nested nodes
	for name, in := range map[string][]byte{
		"length 0xFFFFFFFF":      {0xff, 0xff, 0xff, 0xff, 1, 2, 3},
		"unframed garbage":       []byte("GARBAGE GARBAGE GARBAGE"),
		"truncated frame":        {0x00, 0x00, 0x10, 0x00, 1, 2, 3},
		"union index 5":          frameOf(append(append(append([]byte{}, spaces[:]...), 0x0a), spaces[:]...)),
		"negative length":        frameOf(append(append(append([]byte{}, spaces[:]...), 0x02, 0x01), spaces[:]...)),
		"claims 60 MiB, sends 3": append([]byte{0x03, 0xc0, 0x00, 0x00}, 1, 2, 3),
		"100,000 deep value": append(append(append(frameOf(hs), frameOf([]byte{0})...), frameOf([]byte{0})...),
			append(frameOf(append(append([]byte{}, d.hash[:]...), append(append([]byte{0x02}, appendVarint(nil, int64(len(d.text)))...), append(d.text, append(d.hash[:], 0x02, 0x00)...)...)...)), append(frameOf([]byte{0}), append(frameOf(stringSchema.mustAppend("depth")), frameOf(deep)...)...)...)...),
	} {
		t.Run(name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			conn.Write(in)
			if name == "truncated frame" || name == "claims 60 MiB, sends 3" {
				conn.(*net.TCPConn).CloseWrite()
			}
			conn.SetReadDeadline(time.Now().Add(3 * time.Second))
			rest, _ := io.ReadAll(conn)
			conn.Close()
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if name == "100,000 deep value" {
				// The first handshake is answered (five frames); the second
				// round, whose call carries the deep value, is answered only
				// once read whole, and is not: the connection ends.
				frames := 0
				for len(rest) >= 4 {
					n := int(binary.BigEndian.Uint32(rest))
					rest = rest[min(len(rest), 4+n):]
					frames++
				}
				assert.Equal(t, 5, frames)
			}
			assert.Less(t, took, 2*time.Second, "closed, not left waiting")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4*len(in)+2<<20), "bytes allocated")
			var id any
			require.NoError(t, good.Call(ctx, "id", nil, &id), "the daemon still serves")
		})
	}
	// A well-formed call still works, and arrays travel whole.
	a, _ := ndarray.FromSlice([]float64{1, 2, 3}, 3, 1)
	a, _ = a.ToOrder(ndarray.LittleEndian)
	var back any
	require.NoError(t, good.Call(ctx, "echo", []any{a}, &back))
	assert.True(t, a.Equal(back.(*ndarray.Array)))
	var depth int
	require.NoError(t, good.Call(ctx, "depth", []any{map[string]any{"next": map[string]any{"next": nil}}}, &depth))
	assert.Equal(t, 2, depth)
}
