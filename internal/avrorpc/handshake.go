package avrorpc

import (
	"encoding/binary"
	"fmt"

	"github.com/ndpack/ndpack/yaq/avro"
)

// HandshakeMatch is a server's answer to a handshake: whether it knows the
// client's protocol, and the client its.
type HandshakeMatch int

// The answers a HandshakeResponse gives, in the order of Avro's
// HandshakeMatch enum.
const (
	// MatchBoth: the server knows the client's protocol, and the client
	// expected the server's; calls may follow.
	MatchBoth HandshakeMatch = iota
	// MatchClient: the server knows the client's protocol; its own
	// differs from the one the client expected, and comes with the answer.
	MatchClient
	// MatchNone: the server does not know the client's protocol (it was
	// not sent, or its hash is unknown); the client is to send it again
	// with its protocol.
	MatchNone
)

var matchNames = [...]string{"BOTH", "CLIENT", "NONE"}

// String returns the enum symbol: BOTH, CLIENT or NONE.
func (m HandshakeMatch) String() string {
	if m >= 0 && int(m) < len(matchNames) {
		return matchNames[m]
	}
	return fmt.Sprintf("HandshakeMatch(%d)", int(m))
}

// HandshakeRequest is what an Avro RPC client sends, in the frames of its
// first call on a connection, before the call (Avro's
// org.apache.avro.ipc.HandshakeRequest record): the MD5 of its protocol,
// the protocol itself when the server may not know it, and the MD5 of the
// protocol it expects the server to speak. Its meta map, which yaq peers
// leave empty, is neither kept nor built when read.
type HandshakeRequest struct {
	ClientHash     [16]byte
	ClientProtocol *string // the protocol's JSON text; nil: not sent
	ServerHash     [16]byte
}

// HandshakeResponse is a server's answer to a HandshakeRequest, before its
// answer to the call (org.apache.avro.ipc.HandshakeResponse), its meta
// map left out as for the request.
type HandshakeResponse struct {
	Match          HandshakeMatch
	ServerProtocol *string   // the server's protocol, JSON text; nil: not sent
	ServerHash     *[16]byte // its MD5; nil: not sent
}

// The handshake records as Avro's specification declares them.
var (
	handshakeRequest = mustSchema(`{"type": "record", "name": "HandshakeRequest", "fields": [
		{"name": "clientHash", "type": {"type": "fixed", "name": "MD5", "size": 16}},
		{"name": "clientProtocol", "type": ["null", "string"]},
		{"name": "serverHash", "type": "MD5"},
		{"name": "meta", "type": ["null", {"type": "map", "values": "bytes"}]}]}`)
	handshakeResponse = mustSchema(`{"type": "record", "name": "HandshakeResponse", "fields": [
		{"name": "match", "type": {"type": "enum", "name": "HandshakeMatch", "symbols": ["BOTH", "CLIENT", "NONE"]}},
		{"name": "serverProtocol", "type": ["null", "string"]},
		{"name": "serverHash", "type": ["null", {"type": "fixed", "name": "MD5", "size": 16}]},
		{"name": "meta", "type": ["null", {"type": "map", "values": "bytes"}]}]}`)
	// A server reads a HandshakeRequest as its head and its meta, which
	// it skips: a meta map it has no use for is not built. The head is
	// the record's first three fields; it takes 17 bytes at least.
	handshakeHead = mustSchema(`{"type": "record", "name": "HandshakeRequest", "fields": [
		{"name": "clientHash", "type": {"type": "fixed", "name": "MD5", "size": 16}},
		{"name": "clientProtocol", "type": ["null", "string"]},
		{"name": "serverHash", "type": "MD5"}]}`)
	handshakeMeta = handshakeRequest.Fields[3].Type
)

func mustSchema(text string) *avro.Schema {
	s, err := avro.ParseSchema(text)
	if err != nil {
		panic(err)
	}
	return s
}

// Append appends the request's encoding to dst, with an empty meta map,
// byte for byte as yaqc (and python3-avro) write it.
func (r HandshakeRequest) Append(dst []byte) []byte {
	dst = append(dst, r.ClientHash[:]...)
	dst = appendOptionalString(dst, r.ClientProtocol)
	dst = append(dst, r.ServerHash[:]...)
	return append(dst, 0x02, 0x00) // meta: the map branch, no entries
}

// Append appends the response's encoding to dst, with a null meta, byte
// for byte as yaqd-core writes it.
func (r HandshakeResponse) Append(dst []byte) []byte {
	dst = binary.AppendVarint(dst, int64(r.Match))
	dst = appendOptionalString(dst, r.ServerProtocol)
	if r.ServerHash == nil {
		dst = append(dst, 0x00)
	} else {
		dst = append(append(dst, 0x02), r.ServerHash[:]...)
	}
	return append(dst, 0x00) // meta: null
}

// appendOptionalString appends a ["null", "string"] union.
func appendOptionalString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, 0x00)
	}
	dst = binary.AppendVarint(append(dst, 0x02), int64(len(*s)))
	return append(dst, *s...)
}

// ReadHandshakeRequest reads a client's HandshakeRequest, skipping its
// meta map without building it.
func (f *FrameReader) ReadHandshakeRequest() (HandshakeRequest, error) {
	var r HandshakeRequest
	v, err := f.Value(handshakeHead)
	if err == nil {
		err = f.skip(handshakeMeta)
	}
	if err != nil {
		return r, err
	}
	m := v.(map[string]any)
	copy(r.ClientHash[:], m["clientHash"].([]byte))
	if s, ok := m["clientProtocol"].(string); ok {
		r.ClientProtocol = &s
	}
	copy(r.ServerHash[:], m["serverHash"].([]byte))
	return r, nil
}

// handshakeAnswer names the HandshakeResponse in errors, and tells the
// frame reader that it reads the first value a server sends.
const handshakeAnswer = "handshake response"

// ReadHandshakeResponse reads a server's HandshakeResponse of at most
// limit bytes, its protocol included (see CappedValue): a server has no
// reason to send more than its protocol's size and a little.
func (f *FrameReader) ReadHandshakeResponse(limit int) (HandshakeResponse, error) {
	var r HandshakeResponse
	v, err := f.CappedValue(handshakeResponse, limit, handshakeAnswer)
	if err != nil {
		return r, err
	}
	m := v.(map[string]any)
	for i, name := range matchNames {
		if m["match"] == name {
			r.Match = HandshakeMatch(i)
		}
	}
	if s, ok := m["serverProtocol"].(string); ok {
		r.ServerProtocol = &s
	}
	if h, ok := m["serverHash"].([]byte); ok {
		var hash [16]byte
		copy(hash[:], h)
		r.ServerHash = &hash
	}
	return r, nil
}
