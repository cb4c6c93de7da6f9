package yaq

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
)

// nestDaemon serves a protocol with a recursive type, to be sent values
// nested without end.
func nestDaemon(t testing.TB) (*Daemon, string) {
	proto := `{"protocol": "nest", "types": [{"type": "record", "name": "node", "fields": [{"name": "next", "type": ["null", "node"]}]}, ` +
		avro.ArraySchema + `], "messages": {"depth": {"request": [{"name": "n", "type": ["null", "node"]}], "response": "int"}, ` +
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

// Peers that claim 60 MiB frames, send a little of them and then wait,
// holding their connections open, cost the daemon what they sent plus a
// small constant each, not what they claimed.
func TestDaemonHeldOpenClaims(t *testing.T) {
	_, addr := nestDaemon(t)
	claim := append([]byte{0x03, 0xc0, 0x00, 0x00}, make([]byte, 1<<10)...)
	const peers = 20
	grew := hostile.HoldOpen(t, addr, claim, peers)
	t.Logf("%d peers holding 60 MiB frame claims with 1 KiB sent: the heap grew by %d KiB", peers, grew>>10)
	assert.Less(t, grew, int64(peers*hostile.PerHeldConnection), "bytes a held connection costs")
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
	good, err := Dial(ctx, addr, nil)
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
			append(frameOf(append(append([]byte{}, d.hash[:]...), append(append([]byte{0x02}, appendVarint(nil, int64(len(d.text)))...), append(d.text, append(d.hash[:], 0x02, 0x00)...)...)...)), append(frameOf([]byte{0}), append(frameOf(mustAppend(stringSchema, "depth")), frameOf(deep)...)...)...)...),
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
	a, _ = a.ToOrder('<')
	var back any
	require.NoError(t, good.Call(ctx, "echo", []any{a}, &back))
	assert.True(t, a.Equal(back.(*ndarray.Array)))
	var depth int
	require.NoError(t, good.Call(ctx, "depth", []any{map[string]any{"next": map[string]any{"next": nil}}}, &depth))
	assert.Equal(t, 2, depth)
}

// FuzzDaemonConn sends a daemon's connection arbitrary bytes: it answers or
// closes, never panics, and returns once the peer has hung up.
func FuzzDaemonConn(f *testing.F) {
	d, _ := nestDaemon(f)
	var spaces [16]byte
	for i := range spaces {
		spaces[i] = ' '
	}
	hash := d.hash
	hs, err := handshakeRequest.Append(nil, map[string]any{"clientHash": spaces[:],
		"clientProtocol": "x", "serverHash": hash[:], "meta": nil})
	require.NoError(f, err)
	a, _ := ndarray.FromSlice([]int16{1, -2, 3})
	arr, _ := avro.ArrayOptions{}.AppendArray(nil, a)
	node := []byte{0x02, 0x02, 0x00} // two nodes deep
	call := func(name string, params ...[]byte) []byte {
		b := append(frameOf(hs), frameOf([]byte{0x00})...)
		b = append(b, frameOf(mustAppend(stringSchema, name))...)
		for _, p := range params {
			b = append(b, frameOf(p)...)
		}
		return append(b, 0, 0, 0, 0)
	}
	f.Add(call("echo", arr))
	f.Add(call("depth", node))
	f.Add(call("id"))
	f.Add(append(call("id"), frameOf([]byte{0x00})...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add(frameOf(hs)[:20])
	f.Fuzz(func(t *testing.T, in []byte) {
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { d.serveConn(server); close(done) }()
		go io.Copy(io.Discard, client)
		client.SetWriteDeadline(time.Now().Add(2 * time.Second))
		client.Write(in)
		client.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the connection's goroutine did not return after the peer hung up")
		}
	})
}

// recordAnswers returns what a daemon sends a Go client that shakes hands
// and calls each of calls, as one stream.
func recordAnswers(t testing.TB, addr string, calls func(c *Client)) []byte {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	var got bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		in, err := l.Accept()
		if err != nil {
			return
		}
		defer in.Close()
		out, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		defer out.Close()
		go func() {
			io.Copy(out, in)
			out.(*net.TCPConn).CloseWrite() // the client hung up: so does the daemon
		}()
		io.Copy(io.MultiWriter(in, &got), out)
	}()
	c, err := Dial(context.Background(), l.Addr().String(), nil)
	require.NoError(t, err)
	calls(c)
	c.Close()
	<-copied
	return got.Bytes()
}

// FuzzClientAnswers has a Go client talk to a daemon that sends arbitrary
// bytes: every call returns, with a value or an error, and nothing panics.
func FuzzClientAnswers(f *testing.F) {
	_, addr := nestDaemon(f)
	a, _ := ndarray.FromSlice([]int16{1, -2, 3})
	session := recordAnswers(f, addr, func(c *Client) {
		require.NoError(f, c.Call(context.Background(), "echo", []any{a}, nil))
		require.NoError(f, c.Call(context.Background(), "depth", []any{map[string]any{"next": nil}}, nil))
		require.NoError(f, c.Call(context.Background(), "id", nil, nil))
	})
	require.Greater(f, len(session), 100)
	f.Add(session)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		dialed := false
		c := &Client{maxFrame: ndarray.DefaultMaxSize, dial: func(context.Context) (net.Conn, error) {
			if dialed {
				return nil, errors.New("refused") // one connection per input
			}
			dialed = true
			client, server := net.Pipe()
			go func() {
				defer server.Close()
				go io.Copy(io.Discard, server)
				server.Write(in)
			}()
			return client, nil
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := c.connect(ctx); err != nil {
			return
		}
		defer c.Close()
		for _, name := range []string{"echo", "depth", "id"} {
			var params []any
			switch name {
			case "echo":
				params = []any{a}
			case "depth":
				params = []any{nil}
			}
			var v any
			c.Call(ctx, name, params, &v)
		}
	})
}

// mustAppend encodes v, which the test knows fits s.
func mustAppend(s *avro.Schema, v any) []byte {
	b, err := s.Append(nil, v)
	if err != nil {
		panic(err)
	}
	return b
}
