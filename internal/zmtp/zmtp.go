// Package zmtp speaks ZeroMQ's wire protocol, ZMTP 3.1 (RFC 37, and RFC 23
// for 3.0 peers), as libzmq does over TCP with the NULL mechanism: the
// greeting, the READY handshake that names each side's socket type, and
// messages as chains of frames. It is the transport under package gr00t's
// REQ client and REP server, which pyzmq's sockets talk to.
//
// It is written here rather than taken from a pure-Go ZeroMQ library
// because a peer decides how large a frame says it is: the one measured
// (github.com/go-zeromq/zmq4 v0.17.0) allocates each frame from its size
// field before reading it, so a frame claiming 2^40 bytes aborts the Go
// runtime. Here a frame over what the message may still take is refused
// with ErrTooLarge before anything is allocated for it, and its bytes are
// read into memory that grows as they arrive.
package zmtp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/internal/codecerr"
)

// Errors: a peer that does not speak ZMTP 3 with the NULL mechanism, or
// breaks its rules, fails with ErrProtocol; a message over the size limit
// with the module's ErrTooLarge.
var (
	ErrProtocol = errors.New("zmtp: protocol error")
	ErrTooLarge = codecerr.ErrTooLarge
)

// frameCost is what each frame of a message is charged against its limit
// besides its bytes: the memory its slice takes, so that a message of
// millions of empty frames is refused as a large one is.
const frameCost = 32

// maxCommand bounds a command frame (READY, PING, ERROR): they carry a
// few names and values.
const maxCommand = 64 << 10

// Conn is one ZMTP connection after its handshake. Its reads and writes
// are each for one goroutine at a time.
type Conn struct {
	c        net.Conn
	br       *bufio.Reader
	bw       *bufio.Writer
	max      int // the most bytes one message may take
	chunks   boundedio.Chunks
	PeerType string // the peer's Socket-Type: "REQ", "REP", "DEALER", "ROUTER" ...
	// Charge, if set, is called with each frame's size (and frameCost)
	// before the frame is read, once its header is within the limit; an
	// error from it fails ReadMessage, as the frame is never read. A
	// server charges its shared memory budget so.
	Charge func(n int) error
}

// compatible lists the socket types each type may talk to (RFC 28).
var compatible = map[string][]string{
	"REQ": {"REP", "ROUTER"},
	"REP": {"REQ", "DEALER"},
}

// Handshake greets the peer on c as a socket of socketType ("REQ" or
// "REP") and exchanges the NULL mechanism's READY commands. Messages read
// from the Conn may take at most max bytes.
// It fails with ErrProtocol wrapped for a peer that does not speak ZMTP 3
// with NULL or whose socket type cannot talk to socketType, and with c's
// errors.
func Handshake(c net.Conn, socketType string, max int) (*Conn, error) {
	z := &Conn{c: c, br: bufio.NewReaderSize(c, 64<<10), bw: bufio.NewWriterSize(c, 64<<10), max: max}
	// Our whole greeting first: libzmq sends its own in two parts, the
	// second once it has our signature.
	var g [64]byte
	g[0], g[9], g[10], g[11] = 0xff, 0x7f, 3, 1
	copy(g[12:], "NULL")
	if _, err := z.bw.Write(g[:]); err != nil {
		return nil, err
	}
	if err := z.writeCommand("READY", readyProperties(socketType)); err != nil {
		return nil, err
	}
	if err := z.bw.Flush(); err != nil {
		return nil, err
	}
	var peer [64]byte
	if _, err := io.ReadFull(z.br, peer[:10]); err != nil {
		return nil, fmt.Errorf("zmtp: the peer's greeting: %w", err)
	}
	if peer[0] != 0xff || peer[9]&1 != 1 {
		return nil, fmt.Errorf("%w: the peer does not greet as ZeroMQ does (it sent % x)", ErrProtocol, peer[:10])
	}
	if _, err := io.ReadFull(z.br, peer[10:]); err != nil {
		return nil, fmt.Errorf("zmtp: the peer's greeting: %w", err)
	}
	if peer[10] < 3 {
		return nil, fmt.Errorf("%w: the peer speaks ZMTP %d.%d; 3.0 or later is needed", ErrProtocol, peer[10], peer[11])
	}
	if mech := string(bytes.TrimRight(peer[12:32], "\x00")); mech != "NULL" {
		return nil, fmt.Errorf("%w: the peer's security mechanism is %q; only NULL is spoken", ErrProtocol, mech)
	}
	name, body, err := z.readCommand()
	if err != nil {
		return nil, err
	}
	if name == "ERROR" {
		return nil, fmt.Errorf("%w: the peer refused the handshake: %s", ErrProtocol, errorReason(body))
	}
	if name != "READY" {
		return nil, fmt.Errorf("%w: the peer sent the command %q where READY belongs", ErrProtocol, name)
	}
	props, err := parseProperties(body)
	if err != nil {
		return nil, err
	}
	z.PeerType = props["Socket-Type"]
	ok := false
	for _, t := range compatible[socketType] {
		ok = ok || t == z.PeerType
	}
	if !ok {
		return nil, fmt.Errorf("%w: a %s socket cannot talk to the peer's %q", ErrProtocol, socketType, z.PeerType)
	}
	return z, nil
}

// readyProperties are the READY command's properties, as libzmq sends
// them: the socket type, and an empty identity for a REQ.
func readyProperties(socketType string) []byte {
	b := appendProperty(nil, "Socket-Type", socketType)
	if socketType == "REQ" {
		b = appendProperty(b, "Identity", "")
	}
	return b
}

func appendProperty(b []byte, name, value string) []byte {
	b = append(b, byte(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
	return append(b, value...)
}

// parseProperties reads a READY command's name-value pairs.
func parseProperties(b []byte) (map[string]string, error) {
	props := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+4 {
			return nil, fmt.Errorf("%w: a READY property is cut short", ErrProtocol)
		}
		name := string(b[1 : 1+n])
		v := binary.BigEndian.Uint32(b[1+n:])
		b = b[1+n+4:]
		if uint64(v) > uint64(len(b)) {
			return nil, fmt.Errorf("%w: the READY property %q claims %d bytes, %d remain", ErrProtocol, name, v, len(b))
		}
		props[name] = string(b[:v])
		b = b[v:]
	}
	return props, nil
}

// errorReason is an ERROR command's reason.
func errorReason(b []byte) string {
	if len(b) == 0 || int(b[0]) > len(b)-1 {
		return "(no reason)"
	}
	return fmt.Sprintf("%q", b[1:1+int(b[0])])
}

// Frame flags.
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// writeFrame writes one frame's header and body.
func (z *Conn) writeFrame(flags byte, body []byte) error {
	var h [9]byte
	n := 2
	if len(body) > 255 {
		h[0] = flags | flagLong
		binary.BigEndian.PutUint64(h[1:], uint64(len(body)))
		n = 9
	} else {
		h[0] = flags
		h[1] = byte(len(body))
	}
	if _, err := z.bw.Write(h[:n]); err != nil {
		return err
	}
	_, err := z.bw.Write(body)
	return err
}

// writeCommand writes a command frame.
func (z *Conn) writeCommand(name string, data []byte) error {
	body := append([]byte{byte(len(name))}, name...)
	return z.writeFrame(flagCommand, append(body, data...))
}

// frameHeader reads a frame's flags and size.
func (z *Conn) frameHeader() (byte, uint64, error) {
	flags, err := z.br.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return 0, 0, fmt.Errorf("%w: frame flags %#02x have reserved bits set", ErrProtocol, flags)
	}
	if flags&flagLong == 0 {
		n, err := z.br.ReadByte()
		return flags, uint64(n), unexpected(err)
	}
	var b [8]byte
	if _, err := io.ReadFull(z.br, b[:]); err != nil {
		return 0, 0, unexpected(err)
	}
	return flags, binary.BigEndian.Uint64(b[:]), nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readCommand reads one command frame: its name and the rest.
func (z *Conn) readCommand() (string, []byte, error) {
	flags, n, err := z.frameHeader()
	if err != nil {
		return "", nil, err
	}
	if flags&flagCommand == 0 {
		return "", nil, fmt.Errorf("%w: a message frame where a command belongs", ErrProtocol)
	}
	return z.commandBody(n)
}

// commandBody reads a command frame's body of n bytes.
func (z *Conn) commandBody(n uint64) (string, []byte, error) {
	if n > maxCommand {
		return "", nil, fmt.Errorf("%w: a command of %d bytes, more than the %d a command may take", ErrTooLarge, n, maxCommand)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(z.br, b); err != nil {
		return "", nil, unexpected(err)
	}
	if len(b) == 0 || int(b[0]) > len(b)-1 {
		return "", nil, fmt.Errorf("%w: a command frame without a whole name", ErrProtocol)
	}
	return string(b[1 : 1+int(b[0])]), b[1+int(b[0]):], nil
}

// ReadMessage reads the next message: its frames, in order. A PING
// command met before or between its frames is answered with a PONG.
// It fails with an error wrapping ErrTooLarge when the message's frames
// (each charged frameCost besides its bytes) would take more than the
// limit, before the frame over it is read or allocated; with ErrProtocol
// for a peer that breaks ZMTP's rules or sends ERROR; with
// io.ErrUnexpectedEOF when the connection ends inside a message, io.EOF
// when it ends between messages; and with the connection's errors.
func (z *Conn) ReadMessage() ([][]byte, error) {
	var frames [][]byte
	used := 0
	for {
		flags, n, err := z.frameHeader()
		if err != nil {
			if err == io.EOF && len(frames) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if flags&flagCommand != 0 {
			if err := z.command(n); err != nil {
				return nil, err
			}
			continue
		}
		if used+frameCost > z.max || n > uint64(z.max-used-frameCost) {
			return nil, fmt.Errorf("%w: the peer sent a message of more than %d bytes (a frame of %d after %d)", ErrTooLarge, z.max, n, used)
		}
		if z.Charge != nil {
			if err := z.Charge(frameCost + int(n)); err != nil {
				return nil, err
			}
		}
		used += frameCost + int(n)
		frame, err := z.chunks.ReadFull(z.br, int(n))
		if err != nil {
			return nil, unexpected(err)
		}
		frames = append(frames, frame)
		if flags&flagMore == 0 {
			return frames, nil
		}
	}
}

// command handles a command frame met among messages: PING is answered,
// ERROR ends the connection.
func (z *Conn) command(n uint64) error {
	name, body, err := z.commandBody(n)
	if err != nil {
		return err
	}
	switch name {
	case "PING":
		if len(body) < 2 {
			return fmt.Errorf("%w: a PING without its TTL", ErrProtocol)
		}
		if err := z.writeCommand("PONG", body[2:]); err != nil {
			return err
		}
		return z.bw.Flush()
	case "PONG":
		return nil
	case "ERROR":
		return fmt.Errorf("%w: the peer sent ERROR: %s", ErrProtocol, errorReason(body))
	}
	return fmt.Errorf("%w: the peer sent the unknown command %q", ErrProtocol, name)
}

// WriteMessage writes one message of the given frames and flushes it.
func (z *Conn) WriteMessage(frames ...[]byte) error {
	for i, f := range frames {
		var flags byte
		if i < len(frames)-1 {
			flags = flagMore
		}
		if err := z.writeFrame(flags, f); err != nil {
			return err
		}
	}
	return z.bw.Flush()
}

// Close closes the connection.
func (z *Conn) Close() error { return z.c.Close() }

// NetConn is the connection under z, for its deadlines.
func (z *Conn) NetConn() net.Conn { return z.c }
