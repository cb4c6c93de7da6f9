package yaqrpc

import (
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/vmihailenco/msgpack/v5"
)

// segments collects an outgoing message as net.Buffers: the encoder's small
// writes are gathered in one buffer, large ones (array data) are kept as
// they are, so that the connection's writev sends them without a copy. The
// large slices are the caller's: they must not change until sent.
type segments struct {
	bufs  net.Buffers
	small []byte
	start int // where the part of small not yet in bufs begins
	total int
}

// bigWrite is the size from which a write is kept as its own segment.
const bigWrite = 32 << 10

func (s *segments) Write(p []byte) (int, error) {
	s.total += len(p)
	if len(p) >= bigWrite {
		s.cut()
		s.bufs = append(s.bufs, p)
		return len(p), nil
	}
	s.small = append(s.small, p...)
	return len(p), nil
}

// WriteString appends a (short) string without converting it to []byte
// first, which would allocate.
func (s *segments) WriteString(p string) (int, error) {
	s.total += len(p)
	s.small = append(s.small, p...)
	return len(p), nil
}

func (s *segments) WriteByte(c byte) error {
	s.total++
	s.small = append(s.small, c)
	return nil
}

// cut ends the current run of small writes as a segment.
func (s *segments) cut() {
	if len(s.small) > s.start {
		s.bufs = append(s.bufs, s.small[s.start:len(s.small):len(s.small)])
		s.start = len(s.small)
	}
}

// buffers returns the message, ready for WriteTo.
func (s *segments) buffers() net.Buffers {
	s.cut()
	return s.bufs
}

// reset empties s, keeping its small buffer when it is small.
func (s *segments) reset() {
	if cap(s.small) > 64<<10 {
		s.small = nil
	}
	s.bufs, s.small, s.start, s.total = s.bufs[:0], s.small[:0], 0, 0
}

// encodeRequest encodes req into s as the request struct would be (keys
// ver, id, method, params; id and params left out when empty), writing the
// envelope itself and only the params through the msgpack library.
func encodeRequest(s *segments, req request) error {
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(s)
	hasID, hasParams := req.ID != nil, !emptyParams(req.Params)
	n := byte(2)
	if hasID {
		n++
	}
	if hasParams {
		n++
	}
	s.WriteByte(0x80 | n)
	s.Write(keyVer)
	if hasID {
		s.Write(keyID)
		if err := enc.Encode(req.ID); err != nil {
			return err
		}
	}
	s.Write(keyMethod)
	if err := enc.EncodeString(req.Method); err != nil {
		return err
	}
	if hasParams {
		s.Write(keyParams)
		return enc.Encode(req.Params)
	}
	return nil
}

// The envelope's keys (and version), as msgpack str.
var (
	keyVer    = []byte("\xa3ver\xa31.0")
	keyID     = []byte("\xa2id")
	keyMethod = []byte("\xa6method")
	keyParams = []byte("\xa6params")
)

// emptyParams reports what omitempty leaves out of a request: no params, or
// an empty slice or map of them.
func emptyParams(p any) bool {
	switch v := p.(type) {
	case nil:
		return true
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	rv := reflect.ValueOf(p)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		return rv.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// response is a daemon's answer as a Client reads it: the result stays as
// its bytes, a slice of the message, until Call decodes it into the
// caller's value.
type response struct {
	ID     any
	Result []byte // nil when the message has no result
	Error  *Error
	msg    []byte // the whole message, which Result is part of
}

// parseResponse reads the envelope of a response message (a map of ver,
// id, result or error), which the walker has already checked, without
// decoding or copying the result.
func parseResponse(raw []byte) (*response, error) {
	n, at, err := mapLen(raw)
	if err != nil {
		return nil, err
	}
	resp := &response{}
	for i := 0; i < n; i++ {
		kb, next, ok := shortString(raw, at)
		if !ok {
			return nil, fmt.Errorf("response key %d is not a string", i)
		}
		key := keyName(kb)
		at = next
		valLen := 1
		if key != "id" || !isInt(raw[at]) {
			if valLen, err = mpwalk.Len(raw[at:], mpwalk.Limits{}); err != nil {
				return nil, err
			}
		} else {
			valLen = intLen(raw[at])
		}
		val := raw[at : at+valLen : at+valLen]
		at += valLen
		switch key {
		case "id":
			if isInt(val[0]) {
				resp.ID = readInt(val)
			} else if err := msgpack.Unmarshal(val, &resp.ID); err != nil {
				return nil, fmt.Errorf("id: %w", err)
			}
		case "result":
			resp.Result = val
		case "error":
			if len(val) == 1 && val[0] == 0xc0 {
				continue
			}
			resp.Error = &Error{}
			if err := msgpack.Unmarshal(val, resp.Error); err != nil {
				return nil, fmt.Errorf("error: %w", err)
			}
		}
	}
	return resp, nil
}

// shortString reads a fixstr or str8 at b[at:] (keys are short), as bytes
// of b: comparing them with string(...) allocates nothing.
func shortString(b []byte, at int) ([]byte, int, bool) {
	if at >= len(b) {
		return nil, 0, false
	}
	n, head := 0, 1
	switch c := b[at]; {
	case c >= 0xa0 && c <= 0xbf:
		n = int(c & 0x1f)
	case c == 0xd9 && at+1 < len(b):
		n, head = int(b[at+1]), 2
	default:
		return nil, 0, false
	}
	if at+head+n > len(b) {
		return nil, 0, false
	}
	return b[at+head : at+head+n], at + head + n, true
}

func isInt(c byte) bool { return c <= 0x7f || c >= 0xe0 || (c >= 0xcc && c <= 0xd3) }

// intLen is the length of the msgpack integer that starts with c.
func intLen(c byte) int {
	switch {
	case c <= 0x7f || c >= 0xe0:
		return 1
	case c >= 0xcc && c <= 0xcf:
		return 1 + 1<<(c-0xcc)
	}
	return 1 + 1<<(c-0xd0)
}

// mapLen reads the header of the map at the start of b.
func mapLen(b []byte) (n, at int, err error) {
	switch {
	case len(b) == 0:
		return 0, 0, errors.New("an empty response")
	case b[0] >= 0x80 && b[0] <= 0x8f:
		return int(b[0] & 0x0f), 1, nil
	case b[0] == 0xde && len(b) >= 3:
		return int(b[1])<<8 | int(b[2]), 3, nil
	case b[0] == 0xdf && len(b) >= 5:
		return int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4]), 5, nil
	}
	return 0, 0, fmt.Errorf("a response is a map, got msgpack type byte 0x%02x", b[0])
}

// parseRequest reads a request of the usual shape (a map of str keys ver,
// id, method and params, scalars where they belong) without reflection,
// decoding only params through the msgpack library. ok is false for any
// other shape, which the caller decodes whole.
func parseRequest(raw []byte, opts ext110.MessageOptions) (map[string]any, bool) {
	n, at, err := mapLen(raw)
	if err != nil || n > 4 {
		return nil, false
	}
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		kb, next, ok := shortString(raw, at)
		if !ok || at >= len(raw) {
			return nil, false
		}
		key := keyName(kb)
		at = next
		if _, dup := m[key]; dup || at >= len(raw) {
			return nil, false
		}
		switch c := raw[at]; {
		case key == "ver" && (c >= 0xa0 && c <= 0xbf || c == 0xd9):
			v, next, _ := shortString(raw, at)
			if string(v) == Version {
				m[key] = Version
			} else {
				m[key] = string(v)
			}
			at = next
		case key == "method" && (c >= 0xa0 && c <= 0xbf || c == 0xd9):
			v, next, _ := shortString(raw, at)
			m[key], at = string(v), next
		case key == "id" && isInt(c) && at+intLen(c) <= len(raw):
			m[key], at = readInt(raw[at:]), at+intLen(c)
		case key == "params":
			l, err := mpwalk.Len(raw[at:], mpwalk.Limits{})
			if err != nil {
				return nil, false
			}
			var p any
			if err := opts.UnmarshalMessage(raw[at:at+l], &p); err != nil {
				return nil, false
			}
			m[key], at = p, at+l
		default:
			return nil, false
		}
	}
	return m, at == len(raw)
}

// readInt decodes the msgpack integer at the start of b (isInt(b[0])) as
// the msgpack library would into an interface: int64 or uint64.
func readInt(b []byte) any {
	c := b[0]
	switch {
	case c <= 0x7f:
		return int8(c)
	case c >= 0xe0:
		return int8(c)
	case c >= 0xcc && c <= 0xcf:
		var v uint64
		for _, x := range b[1:intLen(c)] {
			v = v<<8 | uint64(x)
		}
		switch c {
		case 0xcc:
			return uint8(v)
		case 0xcd:
			return uint16(v)
		case 0xce:
			return uint32(v)
		}
		return v
	}
	width := intLen(c) - 1
	var v uint64
	for _, x := range b[1 : 1+width] {
		v = v<<8 | uint64(x)
	}
	shift := 64 - 8*width
	i := int64(v<<shift) >> shift
	switch width {
	case 1:
		return int8(i)
	case 2:
		return int16(i)
	case 4:
		return int32(i)
	}
	return i
}

// writeResponse writes a response as msgpack-python would the map {ver, id,
// result} or {ver, id, error}, encoding only the id and the value through
// enc: the same bytes as the response structs, without their reflection.
func writeResponse(w io.Writer, enc *msgpack.Encoder, id any, result any, e *Error) error {
	key := "\xa6result"
	var v any = result
	if e != nil {
		key, v = "\xa5error", e
	}
	if _, err := io.WriteString(w, "\x83\xa3ver\xa31.0\xa2id"); err != nil {
		return err
	}
	if err := enc.Encode(id); err != nil {
		return err
	}
	if _, err := io.WriteString(w, key); err != nil {
		return err
	}
	return enc.Encode(v)
}

// keyName returns the envelope key b names as a constant string, or "" for
// any other: no key string is allocated.
func keyName(b []byte) string {
	switch string(b) {
	case "ver":
		return "ver"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "result":
		return "result"
	case "error":
		return "error"
	}
	return ""
}
