package yaqrpc

import "github.com/ndpack/ndpack/internal/mpwalk"

// Version is the protocol version sent and required in every message.
const Version = "1.0"

// The limits a message is read under unless configured otherwise: how
// deeply arrays and maps nest (512), and the memory decoding may take as a
// multiple of the message's size plus 4 MiB (ext110's defaults).
const (
	defaultMaxDepth     = mpwalk.DefaultMaxDepth
	defaultMaxExpansion = mpwalk.DefaultMaxExpansion
)

// request is what a Client sends. Params is left out when nil.
type request struct {
	Ver    string `msgpack:"ver"`
	ID     any    `msgpack:"id,omitempty"`
	Method string `msgpack:"method"`
	Params any    `msgpack:"params,omitempty"`
}

// The two response shapes, as separate types so that a nil, false or zero
// result is still sent.
type resultResponse struct {
	Ver    string `msgpack:"ver"`
	ID     any    `msgpack:"id"`
	Result any    `msgpack:"result"`
}

type errorResponse struct {
	Ver   string `msgpack:"ver"`
	ID    any    `msgpack:"id"`
	Error *Error `msgpack:"error"`
}

// intID returns an integer id of any msgpack width as int64.
func intID(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= 1<<63-1
	case int:
		return int64(x), true
	}
	return 0, false
}
