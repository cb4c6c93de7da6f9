//go:build unix

package main

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileMetadataServer serves, on 127.0.0.1 until the test ends, a
// websocket that sends msg as its metadata and waits for the client to go.
func hostileMetadataServer(t *testing.T, msg []byte) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		conn.Write(r.Context(), websocket.MessageBinary, msg)
		conn.Read(r.Context())
	})}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return l.Addr().String()
}

// TestOpenpiCommandHostileMetadata: 60 MB of metadata that would take 40
// times its size in Go values (empty lists) is refused with one line in
// the memory of the message, where it took 2.5 GB.
func TestOpenpiCommandHostileMetadata(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector multiplies memory")
	}
	n := 60 << 20
	msg := append([]byte{0x81, 0xa1, 'a', 0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, bytes.Repeat([]byte{0x90}, n)...)
	r, rss := limited(t, nil, "openpi", hostileMetadataServer(t, msg))
	t.Logf("60 MB of empty lists as metadata: peak RSS %d MiB; %s", rss>>20, strings.TrimSpace(r.stderr))
	assert.Equal(t, 1, r.code)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	assert.Contains(t, r.stderr, "too large")
	assert.Less(t, rss, int64(256<<20), "peak RSS")
}
