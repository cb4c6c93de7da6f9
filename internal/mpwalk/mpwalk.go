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

import (
	"fmt"
	"io"

	"github.com/ndpack/ndpack/internal/mpwire"
)

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

// ExpansionError is a message whose decoded form would take more memory than
// the limit allows for its size.
type ExpansionError struct {
	Estimate int64 // bytes decoding the message so far would allocate
	Read     int64 // bytes of the message read so far
	Limit    int   // the allowed multiple of Read, plus ExpansionSlack
}

func (e *ExpansionError) Error() string {
	return fmt.Sprintf("decoding %d bytes would allocate about %d, more than %d times as much (many small maps or arrays)",
		e.Read, e.Estimate, e.Limit)
}

// Limits bound a walk beyond its byte budget.
type Limits struct {
	// MaxDepth bounds nesting: a top-level array or map is at depth 1, an
	// array inside it at depth 2; 0 or less means no bound. Only walkers
	// that never hand the bytes to a recursive decoder may go without.
	MaxDepth int
	// MaxExpansion bounds the memory a decoder into interface values
	// (the msgpack library decoding into any) would allocate for the
	// bytes walked, as a multiple of them plus ExpansionSlack; 0 or less
	// means no bound. Legitimate data stays under 24 (a list of small
	// integers costs a 16-byte interface each); a message of one-entry maps
	// costs 117 times its size.
	MaxExpansion int
}

// ExpansionSlack is the allowance MaxExpansion adds to every message, so that
// small messages are never refused for their fixed costs.
const ExpansionSlack = 4 << 20

// The limits a message is checked against unless its caller sets others
// (ext110.MessageOptions documents them): nesting depth, and the memory
// decoding may take as a multiple of the message's size (plus
// ExpansionSlack).
const (
	DefaultMaxDepth     = 512
	DefaultMaxExpansion = 48
)

// What decoding into interface values allocates, as measured with
// msgpack/v5 on Go 1.26: each element of an array takes a 16-byte interface
// slot; a string 16 more for its boxed header, a byte slice or slice 24; a
// number that is not a fixint 8; a map 64 bytes and a group of 8 slots
// (about 290 bytes) per 7 entries, which hold its keys and values. The
// estimate is within 10-30% of the truth for lists of numbers, strings,
// records and small containers.
const (
	costSlot     = 16
	costString   = 16
	costSlice    = 24
	costNumber   = 8
	costMap      = 64
	costMapGroup = 290
	groupEntries = 7
	costExt      = 64
)

// level is an array or map still open during a walk.
type level struct {
	left  int64 // values still to walk in it (a map's keys and values)
	total int64 // values it holds
	isMap bool
}

// Value consumes one complete msgpack value from src, taking at most budget
// bytes, and returns how many it took. A container nested deeper than
// lim.MaxDepth fails with *DepthError as soon as its type byte is read, a
// value whose decoding would cost more than lim.MaxExpansion allows with
// *ExpansionError as soon as the estimate passes it. Value fails with
// *BudgetError when a length or count claims more than is left of the
// budget, *InvalidError on an unused type byte, or the error of src.
//
// Its memory is a fixed amount plus 8 bytes per nesting level, whatever the
// input.
func Value(src Source, budget int64, lim Limits) (int64, error) {
	used, _, err := walk(&input{src: src}, budget, lim)
	return used, err
}

// input is what walk reads: a byte slice directly (the common case, with no
// call through an interface and nothing allocated), or a Source.
type input struct {
	b   []byte
	off int
	src Source // nil: read b
}

func (in *input) ReadByte() (byte, error) {
	if in.src != nil {
		return in.src.ReadByte()
	}
	if in.off >= len(in.b) {
		return 0, io.EOF
	}
	in.off++
	return in.b[in.off-1], nil
}

// discard consumes the n payload bytes of a value of type t.
func (in *input) discard(t mpwire.Type, n int) error {
	if in.src != nil {
		if a, ok := in.src.(payloadAligner); ok && n >= alignAbove {
			a.alignPayload(t, n)
		}
		return in.src.Discard(n)
	}
	if n > len(in.b)-in.off {
		return io.ErrUnexpectedEOF
	}
	in.off += n
	return nil
}

// walk is Value, returning also the estimated cost of decoding what it
// walked (when lim.MaxExpansion is set).
func walk(src *input, budget int64, lim Limits) (used, cost int64, err error) {
	maxDepth := lim.MaxDepth
	pending := int64(1) // values still to walk; each needs at least a byte
	// open holds the arrays and maps the walk is inside.
	var openBuf [32]level
	open := openBuf[:0]
	for {
		var parent *level
		if n := len(open); n > 0 {
			parent = &open[n-1]
			parent.left--
		}
		pending--
		at := used
		c, err := src.ReadByte()
		if err != nil {
			return used, cost, err
		}
		used++
		h := mpwire.HeadOf(c)
		if h.Type == mpwire.InvalidType {
			return used, cost, &InvalidError{c}
		}
		isMap := h.Type == mpwire.MapType
		container := isMap || h.Type == mpwire.ArrayType
		if container && maxDepth > 0 && len(open) >= maxDepth {
			return used, cost, &DepthError{Limit: maxDepth, Offset: at}
		}
		// The length or count, from the type byte or the bytes after it.
		n, claimed := int64(h.Len), false
		if h.LenSize > 0 {
			if budget-used < int64(h.LenSize) {
				return used, cost, &BudgetError{h.Type.String() + " length", int64(h.LenSize), budget - used}
			}
			n = 0
			for i := 0; i < h.LenSize; i++ {
				b, err := src.ReadByte()
				if err != nil {
					return used, cost, err
				}
				n = n<<8 | int64(b)
			}
			used += int64(h.LenSize)
			claimed = true
		}
		var skip int64     // bytes of payload after the header
		var children int64 // values inside an array or map
		switch h.Type {
		case mpwire.ArrayType:
			children = n
		case mpwire.MapType:
			children = 2 * n
		case mpwire.ExtType:
			skip = n + 1 // and the ext's type code
		default:
			skip = n
		}
		if claimed && container && pending+children > budget-used {
			return used, cost, &BudgetError{h.Type.String(), n, budget - used}
		}
		if skip > budget-used {
			if !claimed {
				return used, cost, &BudgetError{"value", skip, budget - used}
			}
			return used, cost, &BudgetError{h.Type.String(), n, budget - used}
		}
		if skip > 0 {
			if err := src.discard(h.Type, int(skip)); err != nil {
				return used, cost, err
			}
			used += skip
		}
		pending += children
		if pending > budget-used {
			return used, cost, &BudgetError{"nested values", pending, budget - used}
		}
		if lim.MaxExpansion > 0 {
			cost += valueCost(h.Type, parent, skip, children)
			if cost > int64(lim.MaxExpansion)*used+ExpansionSlack {
				return used, cost, &ExpansionError{Estimate: cost, Read: used, Limit: lim.MaxExpansion}
			}
		}
		if children > 0 {
			open = append(open, level{left: children, total: children, isMap: isMap})
			continue
		}
		for len(open) > 0 && open[len(open)-1].left == 0 {
			open = open[:len(open)-1]
		}
		if len(open) == 0 {
			return used, cost, nil
		}
	}
}

// valueCost estimates what decoding one value into interface values
// allocates, beyond its children; parent is the container it is in, whose
// count already excludes it.
func valueCost(t mpwire.Type, parent *level, skip, children int64) int64 {
	var cost int64
	inMap := parent != nil && parent.isMap
	if inMap {
		// Keys and values live in the map's groups: a new group every
		// groupEntries entries, charged at the key that needs it.
		if isKey := (parent.left+1)%2 == 0; isKey {
			entry := (parent.total-parent.left-1)/2 + 1
			if entry > groupEntries && (entry-1)%groupEntries == 0 {
				cost += costMapGroup
			}
			if t == mpwire.StrType {
				return cost + skip // a string key: its bytes only
			}
		}
	} else {
		cost += costSlot
	}
	switch {
	case t == mpwire.MapType:
		cost += costMap
		if children > 0 {
			cost += costMapGroup
		}
	case t == mpwire.ArrayType:
		cost += costSlice
	case t == mpwire.StrType:
		cost += costString + skip
	case t == mpwire.BinType:
		cost += costSlice + skip
	case t == mpwire.ExtType:
		cost += costExt + skip
	case skip > 0: // numbers wider than a fixint
		cost += costNumber
	}
	return cost
}
