package yaqrpc

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/internal/testutil/loopback"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// measure runs f and returns how long it took and how many bytes the whole
// process allocated meanwhile.
func measure(f func()) (time.Duration, uint64) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := hostile.CPUTime()
	f()
	took := hostile.CPUTime() - start
	runtime.ReadMemStats(&after)
	return took, after.TotalAlloc - before.TotalAlloc
}

// sendRaw writes b on a new connection, closes the sending side and returns
// every message the server sent before closing.
func sendRaw(t *testing.T, addr string, b []byte) []map[string]any {
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		conn.Write(b) // fails once the server stops listening; that is fine
		conn.(*net.TCPConn).CloseWrite()
	}()
	var got []map[string]any
	br := bufio.NewReader(conn)
	for {
		raw, err := mpwalk.Read(br, 1<<20, mpwalk.Limits{MaxDepth: 16})
		if err != nil {
			require.ErrorIs(t, err, io.EOF, "the server must close cleanly, not reset")
			return got
		}
		var m map[string]any
		require.NoError(t, msgpack.Unmarshal(raw, &m))
		got = append(got, m)
	}
}

func TestServerRefusesHostileInput(t *testing.T) {
	addr, _ := testServer(t, 0)
	ctx := context.Background()
	before := dial(t, addr) // a connection open all along keeps being served
	var sum int64
	require.NoError(t, before.Call(ctx, "add", []any{1, 1}, &sum))

	for _, in := range hostile.Inputs() {
		t.Run(in.Name, func(t *testing.T) {
			var got []map[string]any
			took, alloc := measure(func() { got = sendRaw(t, addr, in.Bytes) })
			assert.Less(t, took, hostile.MaxTime)
			assert.LessOrEqual(t, alloc, hostile.MaxAlloc(in), "bytes allocated")
			if in.Answer == "" {
				assert.Empty(t, got)
			} else {
				require.Len(t, got, 1)
				e := got[0]["error"].(map[string]any)
				assert.EqualValues(t, CodeInvalidRequest, e["code"])
				assert.Contains(t, e["message"], in.Answer)
			}
			fresh := dial(t, addr)
			require.NoError(t, fresh.Call(ctx, "add", []any{2, 3}, &sum))
			assert.Equal(t, int64(5), sum)
		})
	}
	require.NoError(t, before.Call(ctx, "add", []any{40, 2}, &sum))
	assert.Equal(t, int64(42), sum)
}

// Peers that claim 60 MiB each, send a little of it and then wait, holding
// their connections open, cost the server what they sent plus a small
// constant each, not what they claimed: 20 of them used to take 1.2 GB.
func TestServerHeldOpenClaims(t *testing.T) {
	addr, _ := testServer(t, 0)
	const peers = 20
	grew := hostile.HoldOpen(t, addr, hostile.ClaimRequest(1<<10), peers)
	t.Logf("%d peers holding 60 MiB claims with 1 KiB sent: the heap grew by %d KiB", peers, grew>>10)
	assert.Less(t, grew, int64(peers*hostile.PerHeldConnection), "bytes a held connection costs")
}

// fakeDaemon answers the first request of each connection with reply's
// bytes, then closes.
func fakeDaemon(t *testing.T, reply []byte) string {
	return loopback.Serve(t, func(conn net.Conn) {
		if _, err := mpwalk.Read(bufio.NewReader(conn), 1<<20, mpwalk.Limits{MaxDepth: 16}); err == nil {
			conn.Write(reply)
		}
	})
}

func TestClientRefusesHostileInput(t *testing.T) {
	for _, in := range hostile.Inputs() {
		if in.RPC {
			continue // requests, not responses
		}
		t.Run(in.Name, func(t *testing.T) {
			addr := fakeDaemon(t, in.Bytes)
			c := dial(t, addr)
			var err error
			took, alloc := measure(func() {
				var v any
				err = c.Call(context.Background(), "get_measured", nil, &v)
			})
			require.Error(t, err)
			assert.Less(t, took, hostile.MaxTime)
			assert.LessOrEqual(t, alloc, hostile.MaxAlloc(in), "bytes allocated")
		})
	}
	// A response whose result nests too deep.
	resp := append([]byte{0x83, 0xa3, 'v', 'e', 'r', 0xa3, '1', '.', '0', 0xa2, 'i', 'd', 0x01, 0xa6, 'r', 'e', 's', 'u', 'l', 't'}, hostile.Nested(2000000)...)
	addr := fakeDaemon(t, resp)
	c := dial(t, addr)
	var v any
	err := c.Call(context.Background(), "get_measured", nil, &v)
	var de *mpwalk.DepthError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "yaqrpc: "+addr+": connection ended while reading a response: arrays and maps nested more than 512 deep (at byte 531)", err.Error())
}

// A request over the size limit is answered on the same call, not reset.
func TestOversizedRequestIsAnswered(t *testing.T) {
	addr, _ := testServer(t, 0)
	c := dial(t, addr)
	big, err := ndarray.Zeros(ndarray.DTypeOf[uint8](), 70<<20)
	require.NoError(t, err)
	err = c.Call(context.Background(), "echo", []any{big}, nil)
	var rpcErr *Error
	require.ErrorAs(t, err, &rpcErr, "%v", err)
	assert.Equal(t, CodeInvalidRequest, rpcErr.Code)
	assert.Contains(t, rpcErr.Message, "exceeds the limit of 67108864 bytes")
	// The client is done (the server closed), and says why.
	assert.True(t, errors.As(c.Call(context.Background(), "add", []any{1, 2}, nil), &rpcErr))
}

// A daemon that hangs up is named in the error, which says what the client
// was waiting for rather than a bare "EOF".
func TestClientNamesTheDaemonThatHangsUp(t *testing.T) {
	for _, tc := range []struct {
		name, sent, want string
	}{
		{"before answering", "", "the daemon closed the connection while the client was waiting for a response: EOF"},
		{"inside a response", "\x83\xa3ver", "the daemon closed the connection in the middle of a response: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeDaemon(t, []byte(tc.sent))
			c := dial(t, addr)
			var v any
			err := c.Call(context.Background(), "get_measured", nil, &v)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "yaqrpc: "+addr+": "+tc.want)
		})
	}
}
