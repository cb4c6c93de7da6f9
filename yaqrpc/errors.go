package yaqrpc

import "fmt"

// The JSON-RPC error codes yaq-RPC uses.
const (
	CodeParseError     = -32700 // the bytes are not a msgpack message
	CodeInvalidRequest = -32600 // the message is not a valid request
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // the method's parameters are wrong
	CodeInternalError  = -32603 // the method failed
)

// Error is a yaq-RPC error: a handler returns one to answer with that code,
// and Client.Call returns the one the daemon sent.
type Error struct {
	Code    int    `msgpack:"code"`           // a JSON-RPC code, such as -32602 for invalid params
	Message string `msgpack:"message"`        // one line saying what went wrong
	Data    any    `msgpack:"data,omitempty"` // optional detail, sent as the handler gave it
}

// Error formats the error with its code and message.
func (e *Error) Error() string { return fmt.Sprintf("yaqrpc: error %d: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
