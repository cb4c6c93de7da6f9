package main

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/yaq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func avroLong(n int64) []byte { return binary.AppendVarint(nil, n) }

func avroString(s string) []byte { return append(avroLong(int64(len(s))), s...) }

// handshakeCall is a first request as yaqc sends it (the protocol's hash
// known), calling method with params already encoded.
func handshakeCall(protocol, method string, params []byte) []byte {
	h := md5.Sum([]byte(protocol))
	b := append([]byte{}, h[:]...)
	b = append(append(b, 0x02), avroString(protocol)...)
	b = append(append(b, h[:]...), 0x00) // server hash, no meta
	b = append(append(b, 0x00), avroString(method)...)
	return append(b, params...)
}

func frame(payloads ...[]byte) []byte {
	var out []byte
	for _, p := range payloads {
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return binary.BigEndian.AppendUint32(out, 0)
}

// Hostile peers stop no fake: text instead of frames, a frame claiming
// 4 GiB, a method name claiming a terabyte, parameters cut short or of the
// wrong kind, unknown methods, a NaN sent as a position, connections
// opened and dropped. After each, a new client is served.
func TestHostilePeersStopNoFake(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	for _, kind := range kindNames() {
		t.Run(kind, func(t *testing.T) {
			addr, c, _ := startAt(t, kind, "target", "sleep = 0\n")
			proto := c.Protocol().JSON
			attacks := map[string][]byte{
				"http":              []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
				"4 GiB frame":       {0xff, 0xff, 0xff, 0xff, 1, 2, 3},
				"terabyte name":     frame(append(handshakeCall(proto, "", nil)[:len(handshakeCall(proto, "", nil))-1], avroLong(1<<40)...)),
				"short parameter":   frame(handshakeCall(proto, "set_position", []byte{1, 2, 3})),
				"unknown method":    frame(handshakeCall(proto, "__del__", nil)),
				"bad union branch":  frame(handshakeCall(proto, "measure", []byte{0x7f})),
				"no terminator":     frame(handshakeCall(proto, "get_state", nil))[:20],
				"nothing":           nil,
				"negative length":   frame(handshakeCall(proto, "set_identifier", avroLong(-5))),
				"pipelined garbage": append(frame(handshakeCall(proto, "busy", nil)), 0xde, 0xad, 0xbe, 0xef),
			}
			for name, b := range attacks {
				conn, err := net.Dial("tcp", addr)
				require.NoError(t, err, name)
				conn.Write(b)
				conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				buf := make([]byte, 1<<16)
				conn.Read(buf)
				conn.Close()
			}
			if m := c.Protocol().Messages["set_position"]; m != nil {
				nan := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))
				conn, err := net.Dial("tcp", addr)
				require.NoError(t, err)
				conn.Write(frame(handshakeCall(proto, "set_position", nan)))
				conn.SetReadDeadline(time.Now().Add(time.Second))
				conn.Read(make([]byte, 1<<16))
				conn.Close()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			fresh, err := yaq.Dial(ctx, addr, nil)
			require.NoError(t, err, "a new client is served")
			defer fresh.Close()
			var id map[string]any
			require.NoError(t, fresh.Call(ctx, "id", nil, &id))
			assert.Equal(t, kind, id["kind"])
			var state string
			require.NoError(t, fresh.Call(ctx, "get_state", nil, &state))
			assert.False(t, strings.Contains(state, "\x00"))
		})
	}
}
