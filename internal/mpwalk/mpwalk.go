// Package mpwalk steps over msgpack values without decoding them, for the
// module's parsers: skipping unknown keys of an ext 110 map, finding where
// one message ends in a stream that has no other framing, and checking a
// whole message before the msgpack library, which trusts claimed counts and
// recurses once per nesting level, is allowed to see it.
//
// It never recurses (nesting cannot exhaust the stack), bounds nesting depth,
// and never trusts a length: every length is checked against a byte budget
// before anything is consumed or sized from it.
package mpwalk

import "fmt"

// Source supplies the bytes being walked.
type Source interface {
	ReadByte() (byte, error)
	// Discard consumes n bytes; Value calls it only within its budget.
	Discard(n int) error
}

// BudgetError is a length, or a count of nested values, that claims more
// bytes than the budget allows: truncated input for a buffer, an oversized
// message for a stream.
type BudgetError struct {
	What    string // "str", "bin", "ext", "array", "map" or "nested values"
	Claimed int64  // the claimed length or count
	Budget  int64  // the bytes that were left
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s claims %d, only %d bytes remain", e.What, e.Claimed, e.Budget)
}

// InvalidError is the one byte msgpack never uses as a type (0xc1).
type InvalidError struct{ Byte byte }

func (e *InvalidError) Error() string {
	return fmt.Sprintf("msgpack type byte 0x%02x is never used", e.Byte)
}

// DepthError is an array or map nested deeper than the limit allows.
type DepthError struct {
	Limit  int   // the nesting limit
	Offset int64 // where the container that went past it starts
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("arrays and maps nested more than %d deep (at byte %d)", e.Limit, e.Offset)
}

// NoDepthLimit, as Value's maxDepth, lets nesting go as deep as the budget
// allows. Only walkers that never hand the bytes to a recursive decoder may
// use it.
const NoDepthLimit = -1

// Value consumes one complete msgpack value from src, taking at most budget
// bytes, and returns how many it took. A top-level array or map is at depth
// 1, an array inside it at depth 2, and so on; one deeper than maxDepth
// fails with *DepthError as soon as its type byte is read. Value fails with
// *BudgetError when a length or count claims more than is left of the
// budget, *InvalidError on an unused type byte, or the error of src.
//
// Its memory is a fixed amount plus 8 bytes per nesting level, whatever the
// input.
func Value(src Source, budget int64, maxDepth int) (int64, error) {
	var used int64
	pending := int64(1) // values still to walk; each needs at least a byte
	// open holds, per open array or map, how many values it still holds.
	var openBuf [32]int64
	open := openBuf[:0]
	for {
		if n := len(open); n > 0 {
			open[n-1]--
		}
		pending--
		at := used
		c, err := src.ReadByte()
		if err != nil {
			return used, err
		}
		used++
		var skip int64     // bytes of payload after the type byte
		var children int64 // values inside an array or map
		var container bool
		var lenWidth int
		var what string
		var claimed int64 // the length as the input states it, for errors
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c <= 0x8f:
			container, children = true, 2*int64(c&0x0f)
		case c <= 0x9f:
			container, children = true, int64(c&0x0f)
		case c <= 0xbf:
			skip = int64(c & 0x1f)
		case c == 0xc1:
			return used, &InvalidError{c}
		case c >= 0xc4 && c <= 0xc6:
			lenWidth, what = 1<<(c-0xc4), "bin"
		case c >= 0xd9 && c <= 0xdb:
			lenWidth, what = 1<<(c-0xd9), "str"
		case c >= 0xc7 && c <= 0xc9:
			lenWidth, what = 1<<(c-0xc7), "ext"
		case c == 0xca:
			skip = 4
		case c == 0xcb:
			skip = 8
		case c >= 0xcc && c <= 0xcf:
			skip = 1 << (c - 0xcc)
		case c >= 0xd0 && c <= 0xd3:
			skip = 1 << (c - 0xd0)
		case c >= 0xd4 && c <= 0xd8:
			skip = 1 + 1<<(c-0xd4) // type byte and data
		case c == 0xdc || c == 0xdd:
			lenWidth, what, container = 2<<(c-0xdc), "array", true
		case c == 0xde || c == 0xdf:
			lenWidth, what, container = 2<<(c-0xde), "map", true
		}
		if container && maxDepth >= 0 && len(open) >= maxDepth {
			return used, &DepthError{Limit: maxDepth, Offset: at}
		}
		if lenWidth > 0 {
			if budget-used < int64(lenWidth) {
				return used, &BudgetError{what + " length", int64(lenWidth), budget - used}
			}
			var n int64
			for i := 0; i < lenWidth; i++ {
				b, err := src.ReadByte()
				if err != nil {
					return used, err
				}
				n = n<<8 | int64(b)
			}
			used += int64(lenWidth)
			claimed = n
			switch what {
			case "array":
				children = n
			case "map":
				children = 2 * n
			case "ext":
				skip = n + 1 // and the type byte
			default:
				skip = n
			}
			if container && pending+children > budget-used {
				return used, &BudgetError{what, n, budget - used}
			}
		}
		if skip > budget-used {
			if what == "" {
				what, claimed = "value", skip
			}
			return used, &BudgetError{what, claimed, budget - used}
		}
		if skip > 0 {
			if err := src.Discard(int(skip)); err != nil {
				return used, err
			}
			used += skip
		}
		pending += children
		if pending > budget-used {
			return used, &BudgetError{"nested values", pending, budget - used}
		}
		if children > 0 {
			open = append(open, children)
			continue
		}
		for len(open) > 0 && open[len(open)-1] == 0 {
			open = open[:len(open)-1]
		}
		if len(open) == 0 {
			return used, nil
		}
	}
}
