package yaqrpc

import (
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
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
	n, rest, err := mpwire.ReadMapHeaderBytes(raw)
	switch {
	case len(raw) == 0:
		return nil, errors.New("an empty response")
	case errors.Is(err, mpwire.ErrType):
		return nil, fmt.Errorf("a response is a map, got msgpack type byte 0x%02x", raw[0])
	case err != nil:
		return nil, err
	}
	resp := &response{}
	for i := 0; i < n; i++ {
		kb, after, err := mpwire.ReadStringZC(rest)
		if err != nil {
			return nil, fmt.Errorf("response key %d is not a string", i)
		}
		key := keyName(kb)
		if key == "id" && isInt(after) {
			if resp.ID, rest, err = readInt(after); err != nil {
				return nil, err
			}
			continue
		}
		valLen, err := mpwalk.Len(after, mpwalk.Limits{})
		if err != nil {
			return nil, err
		}
		val := after[:valLen:valLen]
		rest = after[valLen:]
		switch key {
		case "id":
			if err := msgpack.Unmarshal(val, &resp.ID); err != nil {
				return nil, fmt.Errorf("id: %w", err)
			}
		case "result":
			resp.Result = val
		case "error":
			if mpwire.NextType(val) == mpwire.NilType {
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

// isInt reports whether b starts with a msgpack integer.
func isInt(b []byte) bool {
	t := mpwire.NextType(b)
	return t == mpwire.IntType || t == mpwire.UintType
}

// parseRequest reads a request of the usual shape (a map of str keys ver,
// id, method and params, scalars where they belong) without reflection,
// decoding only params through the msgpack library. ok is false for any
// other shape, which the caller decodes whole.
func parseRequest(raw []byte, opts ndpack.MessageOptions) (map[string]any, bool) {
	n, rest, err := mpwire.ReadMapHeaderBytes(raw)
	if err != nil || n > 4 {
		return nil, false
	}
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		kb, after, err := mpwire.ReadStringZC(rest)
		if err != nil {
			return nil, false
		}
		key := keyName(kb)
		if _, dup := m[key]; dup {
			return nil, false
		}
		isStr := mpwire.NextType(after) == mpwire.StrType
		switch {
		case (key == "ver" || key == "method") && isStr:
			v, next, err := mpwire.ReadStringZC(after)
			if err != nil {
				return nil, false
			}
			if key == "ver" && string(v) == Version {
				m[key] = Version
			} else {
				m[key] = string(v)
			}
			rest = next
		case key == "id" && isInt(after):
			if m[key], rest, err = readInt(after); err != nil {
				return nil, false
			}
		case key == "params":
			l, err := mpwalk.Len(after, mpwalk.Limits{})
			if err != nil {
				return nil, false
			}
			var p any
			if err := opts.UnmarshalMessage(after[:l], &p); err != nil {
				return nil, false
			}
			m[key], rest = p, after[l:]
		default:
			return nil, false
		}
	}
	return m, len(rest) == 0
}

// readInt decodes the msgpack integer at the start of b (isInt(b)) as the
// msgpack library would into an interface: a Go integer of the width and
// signedness it was encoded with.
func readInt(b []byte) (any, []byte, error) {
	h := mpwire.HeadOf(b[0])
	if h.Type == mpwire.UintType {
		u, rest, err := mpwire.ReadUintBytes(b)
		switch h.Len {
		case 1:
			return uint8(u), rest, err
		case 2:
			return uint16(u), rest, err
		case 4:
			return uint32(u), rest, err
		}
		return u, rest, err
	}
	v, rest, err := mpwire.ReadIntBytes(b)
	switch h.Len {
	case 0, 1: // a fixint too
		return int8(v), rest, err
	case 2:
		return int16(v), rest, err
	case 4:
		return int32(v), rest, err
	}
	return v, rest, err
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
