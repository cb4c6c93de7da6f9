package openpi

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
)

// hostileMessages are messages a hostile peer sends, and the class of
// error each must be refused with.
func hostileMessages() []struct {
	name  string
	msg   []byte
	class error
} {
	arrayMap := func(data []byte, shape ...byte) []byte {
		b := []byte{0x84, 0xc4, 11}
		b = append(b, "__ndarray__"...)
		b = append(b, 0xc3, 0xc4, 4, 'd', 'a', 't', 'a', 0xc4, byte(len(data)))
		b = append(b, data...)
		b = append(b, 0xc4, 5, 'd', 't', 'y', 'p', 'e', 0xa3, '<', 'f', '4', 0xc4, 5, 's', 'h', 'a', 'p', 'e', 0x90|byte(len(shape)))
		return append(b, shape...)
	}
	inMap := func(v []byte) []byte { return append([]byte{0x81, 0xa1, 'a'}, v...) }
	tiny := []byte{0x81, 0xa1, 'a', 0xdd, 0x00, 0x2d, 0xc6, 0xc0} // 3 million {"": nil}
	tiny = append(tiny, bytes.Repeat([]byte{0x81, 0xa0, 0xc0}, 3000000)...)
	return []struct {
		name  string
		msg   []byte
		class error
	}{
		{"data shorter than the shape", inMap(arrayMap(make([]byte, 8), 3)), ndarray.ErrMalformed},
		{"data longer than the shape", inMap(arrayMap(make([]byte, 16), 3)), ndarray.ErrMalformed},
		{"a shape that overflows", inMap(arrayMap(nil, 0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)), ndarray.ErrMalformed},
		{"a list, not a map", []byte{0x92, 0x01, 0x02}, ndarray.ErrMalformed},
		{"an array map at the top", arrayMap(make([]byte, 4), 1), ndarray.ErrMalformed},
		{"an integer key", []byte{0x81, 0x01, 0x02}, ndarray.ErrMalformed},
		{"an ext value", inMap([]byte{0xd4, 0x05, 0x00}), ndarray.ErrMalformed},
		{"bytes after the map", []byte{0x80, 0x80}, ndarray.ErrMalformed},
		{"the byte msgpack never uses", inMap([]byte{0xc1}), ndarray.ErrMalformed},
		{"empty", nil, ndarray.ErrTruncated},
		{"a map cut short", []byte{0x82, 0xa1, 'a', 0x01}, ndarray.ErrTruncated},
		{"a bin32 claiming 4 GiB", inMap(append([]byte{0xc6, 0xff, 0xff, 0xff, 0xff}, make([]byte, 10)...)), ndarray.ErrTruncated},
		{"a map32 claiming 2^32-1 pairs", []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, ndarray.ErrTruncated},
		{"nesting 100,000 lists", inMap(hostile.Nested(100000)), ndarray.ErrTooDeep},
		{"nesting 100,000 maps", append(bytes.Repeat([]byte{0x81, 0xa0}, 100000), 0xc0), ndarray.ErrTooDeep},
		{"3 million one-entry maps", tiny, ndarray.ErrTooLarge},
		// 40 and 64 times their size in Go values: under the 48 the
		// module's other decoders allow, over openpi's 8.
		{"a million empty lists", inMap(append([]byte{0xdd, 0x00, 0x0f, 0x42, 0x40}, bytes.Repeat([]byte{0x90}, 1000000)...)), ndarray.ErrTooLarge},
		{"a million empty maps", inMap(append([]byte{0xdd, 0x00, 0x0f, 0x42, 0x40}, bytes.Repeat([]byte{0x80}, 1000000)...)), ndarray.ErrTooLarge},
		{"a map of a million nils", append([]byte{0xdf, 0x00, 0x0f, 0x42, 0x40}, bytes.Repeat([]byte{0xa0, 0xc0}, 1000000)...), ndarray.ErrTooLarge},
	}
}

// TestHostileMessages: every hostile message is refused with its class, in
// bounded time and memory, and so is every input of the module's hostile
// set.
func TestHostileMessages(t *testing.T) {
	for _, h := range hostileMessages() {
		check := func(err error, took time.Duration, allocated uint64) {
			t.Helper()
			if !errors.Is(err, h.class) || !strings.HasPrefix(err.Error(), "openpi: ") {
				t.Errorf("%s: got %v, want %v", h.name, err, h.class)
			}
			if took > hostile.MaxTime || allocated > uint64(len(h.msg))*hostile.AllocPerByte+hostile.AllocConstant {
				t.Errorf("%s: took %v and allocated %d bytes for %d", h.name, took, allocated, len(h.msg))
			}
		}
		var err error
		start := hostile.CPUTime()
		allocated, _ := hostile.HeapCost(func() { _, err = decodeMessage(h.msg) })
		check(err, hostile.CPUTime()-start, allocated)
	}
	for _, in := range hostile.Inputs() {
		var err error
		start := hostile.CPUTime()
		allocated, _ := hostile.HeapCost(func() { _, err = decodeMessage(in.Bytes) })
		if err == nil {
			t.Errorf("%s: decoded", in.Name)
		}
		if took := hostile.CPUTime() - start; took > hostile.MaxTime || allocated > hostile.MaxAlloc(in) {
			t.Errorf("%s: took %v and allocated %d bytes", in.Name, took, allocated)
		}
	}
}

// fakeServer serves a websocket on 127.0.0.1 that sends each of msgs (a
// text message for a string) and then reads until the client goes.
func fakeServer(t *testing.T, msgs ...any) string {
	t.Helper()
	return serveHTTP(t, wsHandler(func(r *http.Request, conn *websocket.Conn) {
		for _, m := range msgs {
			var err error
			switch m := m.(type) {
			case string:
				err = conn.Write(r.Context(), websocket.MessageText, []byte(m))
			case []byte:
				err = conn.Write(r.Context(), websocket.MessageBinary, m)
			}
			if err != nil {
				return
			}
			conn.Read(r.Context()) // the observation, or the client's close
		}
		conn.Close(websocket.StatusNormalClosure, "")
	}))
}

// serveHTTP serves h on a new 127.0.0.1 listener until the test ends and
// returns its address.
func serveHTTP(tb testing.TB, h http.HandlerFunc) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(l)
	tb.Cleanup(func() { hs.Close() })
	return l.Addr().String()
}

// wsHandler accepts a websocket without a size limit and hands it to
// serve, closing it when serve returns.
func wsHandler(serve func(r *http.Request, conn *websocket.Conn)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		conn.SetReadLimit(-1)
		serve(r, conn)
	}
}

// TestHostileServer: a server sending any hostile message, as its
// metadata or as an action, fails the call with the message's class.
func TestHostileServer(t *testing.T) {
	for _, h := range hostileMessages() {
		if len(h.msg) > 1<<20 {
			continue // the decoder's test covers them
		}
		if _, err := Dial(ctx10(t), fakeServer(t, h.msg), nil); !errors.Is(err, h.class) {
			t.Errorf("%s as metadata: got %v, want %v", h.name, err, h.class)
		}
		c := dialT(t, fakeServer(t, []byte{0x80}, h.msg), nil)
		if _, err := c.Infer(ctx10(t), nil); !errors.Is(err, h.class) {
			t.Errorf("%s as an action: got %v, want %v", h.name, err, h.class)
		}
	}
	// Text where the metadata should be: the server's error.
	_, err := Dial(ctx10(t), fakeServer(t, "Traceback ...\nRuntimeError: no GPU\n"), nil)
	var se *ServerError
	if !errors.As(err, &se) || se.LastLine != "RuntimeError: no GPU" {
		t.Errorf("text metadata: got %v", err)
	}
	// A server that closes without metadata.
	_, err = Dial(ctx10(t), fakeServer(t), nil)
	if !errors.Is(err, io.EOF) {
		t.Errorf("no metadata: got %v", err)
	}
}

// TestHostileServerHugeFrame: a frame that claims a terabyte costs the
// client what arrives, up to its limit, and fails with ErrTooLarge.
func TestHostileServerHugeFrame(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "+
			base64.StdEncoding.EncodeToString(sum[:])+"\r\n\r\n")
		frame := binary.BigEndian.AppendUint64([]byte{0x82, 127}, 1<<40)
		conn.Write(frame)
		chunk := make([]byte, 64<<10)
		for range 64 { // 4 MiB, then the client has given up
			if _, err := conn.Write(chunk); err != nil {
				return
			}
		}
		io.Copy(io.Discard, conn)
	}()
	var derr error
	allocated, _ := hostile.HeapCost(func() { _, derr = Dial(ctx10(t), l.Addr().String(), &DialOptions{MaxSize: 256 << 10}) })
	if !errors.Is(derr, ndarray.ErrTooLarge) {
		t.Errorf("got %v, want ndarray.ErrTooLarge", derr)
	}
	if allocated > 2<<20 {
		t.Errorf("allocated %d bytes for a message limited to 256 KiB", allocated)
	}
}

// rawClient completes a websocket handshake with addr by hand and returns
// the connection, its reader, and the metadata frame's payload.
func rawClient(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+addr+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	return conn, br
}

// readFrame reads one unmasked frame of at most 64 KiB from a server.
func readFrame(t *testing.T, br *bufio.Reader) (opcode byte, payload []byte) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		io.ReadFull(br, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		t.Fatal("a server frame of over 64 KiB")
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(br, payload); err != nil {
		t.Fatal(err)
	}
	return h[0] & 0x0f, payload
}

// TestHostileClientHugeFrame: a client frame that claims a terabyte is
// read only up to the server's limit, and closed with 1009.
func TestHostileClientHugeFrame(t *testing.T) {
	addr := startServer(t, &Server{Policy: Echo, MaxSize: 64 << 10})
	conn, br := rawClient(t, addr)
	if op, meta := readFrame(t, br); op != 2 || !bytes.Equal(meta, []byte{0x80}) {
		t.Fatalf("metadata frame %d %x", op, meta)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	frame := binary.BigEndian.AppendUint64([]byte{0x82, 0x80 | 127}, 1<<40)
	frame = append(frame, 0, 0, 0, 0) // the mask
	go func() {
		conn.Write(frame)
		chunk := make([]byte, 64<<10)
		for range 64 {
			if _, err := conn.Write(chunk); err != nil {
				return
			}
		}
	}()
	op, p := readFrame(t, br)
	if op != 8 || len(p) < 2 || binary.BigEndian.Uint16(p) != 1009 {
		t.Errorf("got frame %d %q, want a close with 1009", op, p)
	}
}

// TestHostileClient: a client sending a hostile observation, or text,
// gets a text message saying why and a close with 1011, as openpi's
// server answers an exception.
func TestHostileClient(t *testing.T) {
	addr := startServer(t, &Server{Policy: Echo})
	send := func(typ websocket.MessageType, msg []byte) (string, error) {
		conn, _, err := websocket.Dial(ctx10(t), "ws://"+addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		conn.SetReadLimit(-1)
		if _, _, err := conn.Read(ctx10(t)); err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx10(t), typ, msg); err != nil {
			t.Fatal(err)
		}
		rt, text, err := conn.Read(ctx10(t))
		if err != nil || rt != websocket.MessageText {
			t.Fatalf("got %v %q %v, want a text message", rt, text, err)
		}
		_, _, err = conn.Read(ctx10(t))
		return string(text), err
	}
	for _, h := range hostileMessages() {
		text, err := send(websocket.MessageBinary, h.msg)
		words := h.class.Error()
		if h.class == ndarray.ErrMalformed {
			words = "malformed message" // as the package words the class
		}
		if !strings.HasPrefix(text, "openpi: "+words) || websocket.CloseStatus(err) != websocket.StatusInternalError {
			t.Errorf("%s: got %q then %v", h.name, text, err)
		}
	}
	text, err := send(websocket.MessageText, []byte("hello"))
	if !strings.Contains(text, "text message where an observation (binary) was expected") || websocket.CloseStatus(err) != websocket.StatusInternalError {
		t.Errorf("text: got %q then %v", text, err)
	}
}

// TestHostileClientHoldsHugeFrame: clients that claim a terabyte in a
// frame, send 256 KiB of it and wait cost the server what arrived, not
// what was claimed, under the default limit of 64 MiB.
func TestHostileClientHoldsHugeFrame(t *testing.T) {
	addr := startServer(t, &Server{Policy: Echo})
	handshake := "GET / HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	msg := binary.BigEndian.AppendUint64(append([]byte(handshake), 0x82, 0x80|127), 1<<40)
	msg = append(msg, 0, 0, 0, 0) // the mask
	msg = append(msg, make([]byte, 256<<10)...)
	const peers = 4
	grew := hostile.HoldOpen(t, addr, msg, peers)
	t.Logf("heap grew %d bytes for %d peers each claiming 1 TiB and sending 256 KiB", grew, peers)
	if grew > peers*(1<<20) {
		t.Errorf("heap grew %d bytes for %d peers that sent 256 KiB each", grew, peers)
	}
}

// rawControl reports whether s holds a character that would drive a
// terminal: a control character other than a newline, or invalid UTF-8.
func rawControl(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return true
			}
		}
		if r != '\n' && (r < 0x20 || r >= 0x7f && r < 0xa0) {
			return true
		}
	}
	return false
}

// escapeDTypeMessage is a message holding an array whose dtype is a
// terminal's escape sequence (OSC 52, a clipboard write).
func escapeDTypeMessage() []byte {
	meta := []byte{0x81, 0xa1, 'a', 0x84, 0xc4, 11}
	meta = append(meta, "__ndarray__"...)
	return append(meta, 0xc3, 0xc4, 4, 'd', 'a', 't', 'a', 0xc4, 0, 0xc4, 5, 'd', 't', 'y', 'p', 'e', 0xa6, 0x1b, ']', '5', '2', ';', 7,
		0xc4, 5, 's', 'h', 'a', 'p', 'e', 0x91, 0)
}

// hostileTraceback is a server's text that writes the clipboard (OSC 52),
// clears the screen, colours and hides what follows.
const hostileTraceback = "Traceback (most recent call last):\n  \x1b]52;c;cm0gLXJmIH4=\a\x1b[2J\r\n" +
	"ValueError: \x1b[31mred\u009b8m\xff\n"

// TestHostileText: what a server says (a traceback, a dtype, a close
// reason) reaches the client's errors with its control characters
// escaped, the traceback's newlines kept; ServerError keeps the text as
// sent.
func TestHostileText(t *testing.T) {
	c := dialT(t, fakeServer(t, []byte{0x80}, hostileTraceback), nil)
	_, err := c.Infer(ctx10(t), nil)
	var se *ServerError
	if !errors.As(err, &se) || se.Traceback != hostileTraceback {
		t.Fatalf("got %v, want the traceback as a ServerError", err)
	}
	if want := `ValueError: \x1b[31mred\u009b8m\xff`; se.LastLine != want {
		t.Errorf("LastLine %q, want %q", se.LastLine, want)
	}
	if text := err.Error(); rawControl(text) || !strings.HasPrefix(text, `openpi: server error: ValueError: \x1b[31mred`) ||
		!strings.Contains(text, "\n  \\x1b]52;c;cm0gLXJmIH4=\\a\\x1b[2J\\r\n") {
		t.Errorf("the error holds raw control characters, or lost the traceback's lines: %q", text)
	}

	// A dtype that is an escape sequence, in the metadata.
	if _, err := Dial(ctx10(t), fakeServer(t, escapeDTypeMessage()), nil); !errors.Is(err, ndarray.ErrMalformed) || rawControl(err.Error()) {
		t.Errorf("a hostile dtype: %q", err)
	}

	// A close reason that is an escape sequence.
	addr := serveHTTP(t, wsHandler(func(r *http.Request, conn *websocket.Conn) {
		conn.Write(r.Context(), websocket.MessageBinary, []byte{0x80})
		conn.Read(r.Context())
		conn.Close(websocket.StatusPolicyViolation, "\x1b]52;c;aGk=\a\u009b")
	}))
	c = dialT(t, addr, nil)
	if _, err := c.Infer(ctx10(t), nil); err == nil || rawControl(err.Error()) {
		t.Errorf("a hostile close reason: %q", err)
	}
}
