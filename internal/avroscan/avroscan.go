// Package avroscan lends Avro RPC's framing (internal/avrorpc) the two
// things package yaq/avro knows of its binary encoding and does not
// export: whether a schema's values take no bytes, and where a value ends
// in bytes that arrive a frame at a time. Both need the decoder's reader,
// limits and what parsing a schema established, so they stay in yaq/avro,
// which sets these hooks once, in its init; nothing else sets them.
//
// It imports nothing of the module, so that yaq/avro may import it; a
// schema is passed as any and is always an *avro.Schema.
package avroscan

// Scanner finds where a value ends in bytes that arrive a frame at a time,
// resuming where it stopped, so that a value spread over many frames is
// scanned once, not once per frame. It builds nothing: the value is
// decoded, and checked whole, once it is complete.
type Scanner interface {
	// Start begins a value of schema (an *avro.Schema) that may take at
	// most max bytes.
	Start(schema any, max int)
	// Resume scans b, the value's bytes so far (the same as before, and
	// more), from where the last call stopped. It returns the value's
	// length once its end is found, an *ndarray.Error wrapping ErrTruncated
	// while it needs more bytes, or what makes the value unreadable.
	Resume(b []byte) (int, error)
}

// The hooks, set by yaq/avro's init.
var (
	// NewScanner returns a Scanner, to be used for one value after
	// another.
	NewScanner func() Scanner
	// TakesNoBytes reports whether the values of schema (an
	// *avro.Schema) take no bytes: null, a fixed of size 0, a record of
	// such fields.
	TakesNoBytes func(schema any) bool
)
