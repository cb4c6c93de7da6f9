package gr00tpolicy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/gr00tmap"
	"github.com/ndpack/ndpack/internal/zmtp"
	"github.com/ndpack/ndpack/ndarray"
)

// arrayMap is a message of one GR00T array map holding npy.
func arrayMap(npy []byte) []byte {
	b := []byte{0x82, 0xb1}
	b = append(b, gr00tmap.Marker...)
	b = append(b, 0xc3, 0xa6)
	b = append(b, "as_npy"...)
	b = append(b, 0xc6, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(b[len(b)-4:], uint32(len(npy)))
	return append(b, npy...)
}

// Servers that lie: each answer is a clear error, read in bounded memory,
// and the next call connects anew and works.
func TestHostileServers(t *testing.T) {
	npy := npyOf(t, must(ndarray.FromSlice([]float64{1, 2, 3, 4}, 4)))
	claimsMore := bytes.Replace(append([]byte(nil), npy...), []byte("(4,)"), []byte("(9,)"), 1)
	object := bytes.Replace(append([]byte(nil), npy...), []byte("'<f8'"), []byte("'|O' "), 1)
	deep := append(bytes.Repeat([]byte{0x91}, 100000), 0xc0)
	for _, tc := range []struct {
		name   string
		answer [][]byte
		class  error
		says   string
	}{
		{"garbage", [][]byte{{}, []byte("\xc1 not msgpack")}, ndarray.ErrMalformed, "msgpack"},
		{"three frames", [][]byte{{}, {0xc0}, {0xc0}}, ndarray.ErrMalformed, "3 frames"},
		{"no delimiter", [][]byte{{0xc0}}, ndarray.ErrMalformed, "1 frames"},
		{"npy claiming more", [][]byte{{}, arrayMap(claimsMore)}, ndarray.ErrTruncated, ""},
		{"object array", [][]byte{{}, arrayMap(object)}, nil, "object"},
		{"not npy", [][]byte{{}, arrayMap([]byte("PK\x03\x04 a zip"))}, nil, "npy"},
		{"deep", [][]byte{{}, deep}, ndarray.ErrTooDeep, "nested more than"},
		{"bytes after", [][]byte{{}, {0xc0, 0xc0}}, ndarray.ErrMalformed, "after the message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeREP(t, func([]byte) [][]byte { return tc.answer })
			c := dialT(t, addr, nil)
			_, err := c.Call(ctxT(t), "ping", nil)
			t.Log(err)
			if err == nil || (tc.class != nil && !errors.Is(err, tc.class)) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%v", err)
			}
			if strings.ContainsAny(err.Error(), "\n\x1b") {
				t.Errorf("the error is not one line: %q", err)
			}
		})
	}
}

// A server whose answer claims a frame of 2^40 bytes fails the call with
// ndarray.ErrTooLarge before anything is allocated for it.
func TestHugeFrameClaim(t *testing.T) {
	l := listen(t)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(30 * time.Second))
		z, err := zmtp.Handshake(nc, "REP", 1<<20)
		if err != nil {
			return
		}
		if _, err := z.ReadMessage(); err != nil {
			return
		}
		// The delimiter, then a long frame's header: 2^40 bytes.
		nc.Write([]byte{0x01, 0x00, 0x02, 0, 0, 1, 0, 0, 0, 0, 0})
		time.Sleep(10 * time.Second) // holds the connection open; the client must not wait for it
	}()
	t.Cleanup(func() { l.Close() })
	c := dialT(t, l.Addr().String(), nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := c.Call(ctxT(t), "ping", nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ndarray.ErrTooLarge) {
		t.Errorf("a frame of 2^40 bytes: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v", d)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("refusing the frame allocated %d bytes", grew)
	}
}

// reqConn is a raw REQ connection to a server, for sending what clients
// should not.
func reqConn(t testing.TB, addr string) *zmtp.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	z, err := zmtp.Handshake(nc, "REQ", 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// Clients that send what they should not: each request that arrives whole
// is answered {"error": ...} on a connection that stays usable; a request
// over MaxSize or without REQ's framing closes its connection; the server
// serves others throughout.
func TestHostileClients(t *testing.T) {
	s := &Server{Policy: Echo, MaxSize: 1 << 20, ErrorLog: newLogger(&bytes.Buffer{})}
	addr, _ := startServer(t, s)
	npy := npyOf(t, must(ndarray.FromSlice([]float64{1, 2, 3, 4}, 4)))
	claimsMore := bytes.Replace(append([]byte(nil), npy...), []byte("(4,)"), []byte("(9,)"), 1)
	object := bytes.Replace(append([]byte(nil), npy...), []byte("'<f8'"), []byte("'|O' "), 1)
	getAction := func(obs []byte) []byte {
		b := append([]byte{0x82, 0xa8}, "endpoint"...)
		b = append(b, 0xaa)
		b = append(b, "get_action"...)
		b = append(b, 0xa4)
		b = append(b, "data"...)
		b = append(b, 0x81, 0xab)
		b = append(b, "observation"...)
		return append(append(b, 0x81, 0xa1, 'x'), obs...)
	}
	z := reqConn(t, addr)
	for _, tc := range []struct {
		name string
		body []byte
		says string
	}{
		{"garbage", []byte("\xc1\xc1"), "malformed message"},
		{"a list", []byte{0x91, 0x01}, "the request is a list of 1, not a map"},
		{"npy claiming more", getAction(arrayMap(claimsMore)), "truncated"},
		{"object array", getAction(arrayMap(object)), "object"},
		{"deep", append(bytes.Repeat([]byte{0x91}, 100000), 0xc0), "nested more than"},
		{"endpoint not a string", []byte{0x81, 0xa8, 'e', 'n', 'd', 'p', 'o', 'i', 'n', 't', 0x07}, "Unknown endpoint: 7"},
		{"data not a map", append(append([]byte{0x81, 0xa4}, "data"...), 0x07), "data is an integer, not a map"},
	} {
		if err := z.WriteMessage(nil, tc.body); err != nil {
			t.Fatal(err)
		}
		frames, err := z.ReadMessage()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		v, err := decode(frames[1], nil)
		m, _ := v.(map[string]any)
		text, _ := m["error"].(string)
		t.Logf("%s: %s", tc.name, text)
		if err != nil || !strings.Contains(text, tc.says) {
			t.Errorf("%s: answered %v (%v)", tc.name, v, err)
		}
	}
	// Over MaxSize: the connection closes before the frame is read, so
	// that writing the rest of it may fail (broken pipe) or not, as the
	// close races the write; no answer comes either way.
	big := reqConn(t, addr)
	if err := big.WriteMessage(nil, make([]byte, 2<<20)); err == nil {
		if _, err := big.ReadMessage(); err == nil {
			t.Error("a request over MaxSize was answered")
		}
	}
	// Without the delimiter: closed too.
	raw := reqConn(t, addr)
	if err := raw.WriteMessage([]byte{0xc0}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ReadMessage(); err == nil {
		t.Error("a request without a delimiter was answered")
	}
	c := dialT(t, addr, nil)
	if err := c.Ping(ctxT(t)); err != nil {
		t.Errorf("a client after the hostile ones: %v", err)
	}
}
