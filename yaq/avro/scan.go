package avro

import (
	"github.com/ndpack/ndpack/ndarray"
)

// A Scanner finds where a value ends in bytes that arrive in pieces (the
// frames of Avro RPC, the reads of a socket), before the value is decoded.
// It resumes where it stopped, at the start of the token (a number, a
// length and its bytes, a block count) it could not read whole, so that a
// value spread over many pieces is scanned once, not once per piece: work
// linear in its bytes however they are cut. It builds nothing and checks
// what finding the end needs (counts, lengths, union branches, nesting,
// the items that take no bytes) with the limits Decode has; the value is
// then decoded, and checked whole, once it is complete. The zero value is
// ready for Start; a Scanner is kept from value to value for the memory of
// its stack, and is not for concurrent use.
type Scanner struct {
	stack []scanStep
	off   int // where the next token starts; what is before it is scanned
	zero  int // items that take no bytes, so far
	max   int // the most bytes the value may take
}

// scanStep is a value being scanned: where in it the scan is.
type scanStep struct {
	s    *Schema
	i    int   // record: the next field; ndarray: the next part; union: 1 once the branch is pushed
	left int64 // array, map, ndarray shape: the items left in the block
	key  bool  // map: the key of the next entry has been read
}

// Start begins a value of s that may take at most max bytes.
func (sc *Scanner) Start(s *Schema, max int) {
	sc.stack = append(sc.stack[:0], scanStep{s: s})
	sc.off, sc.zero, sc.max = 0, 0, max
}

// push starts scanning a value of s inside the current one, unless it
// takes no bytes.
func (sc *Scanner) push(s *Schema) error {
	if s.TakesNoBytes() {
		return nil
	}
	if len(sc.stack) > maxValueDepth {
		return errAt(ndarray.ErrTooDeep, sc.off, "values nested more than %d deep", maxValueDepth)
	}
	sc.stack = append(sc.stack, scanStep{s: s})
	return nil
}

// length reads a length and skips that many bytes, refusing a length the
// value could never hold.
func (sc *Scanner) length(r *reader, what string) error {
	at := r.off
	n, err := r.varintOf(what, " length")
	if err != nil {
		return err
	}
	if n < 0 {
		return errAt(errMalformed, at, "%s has a negative length (%d)", what, n)
	}
	if n > int64(sc.max-r.off) {
		return errAt(ndarray.ErrTooLarge, at, "%s claims %d bytes, more than the %d a value may take", what, n, sc.max)
	}
	if n > int64(len(r.b)-r.off) {
		return errAt(ndarray.ErrTruncated, at, "%s claims %d bytes, %d remain", what, n, len(r.b)-r.off)
	}
	r.off += int(n)
	return nil
}

// skip skips n bytes of a fixed size.
func skip(r *reader, n int, what string) error {
	if len(r.b)-r.off < n {
		return errAt(ndarray.ErrTruncated, r.off, "the input ends inside %s", what)
	}
	r.off += n
	return nil
}

// count reads a block count of a value's items of elem, checking it
// against the bytes the value may still take, or, for items that take no
// bytes, against the cap on them.
func (sc *Scanner) count(r *reader, what string, elem *Schema) (int64, error) {
	at := r.off
	n, err := r.blockCount(what, sc.max)
	if err != nil || n == 0 {
		return n, err
	}
	if elem != nil && elem.TakesNoBytes() {
		if n > int64(maxZeroSizeItems-sc.zero) {
			return 0, errAt(ndarray.ErrTooLarge, at, "%s block claims %d items of %s, which take no bytes; a value may hold %d such items in all, and %d came before",
				what, n, elem, maxZeroSizeItems, sc.zero)
		}
		sc.zero += int(n)
		return n, nil
	}
	if n > int64(sc.max-r.off) {
		return 0, errAt(ndarray.ErrTooLarge, at, "%s block claims %d items, more than the %d bytes a value may take", what, n, sc.max)
	}
	return n, nil
}

// Resume scans b, the value's bytes so far (the same as before, and more),
// from where the last call stopped. It returns the value's length once its
// end is found.
// It fails with an *ndarray.Error wrapping ndarray.ErrTruncated while it
// needs more bytes, ndarray.ErrTooLarge for a length or count over what
// the value may take, and ndarray.ErrMalformed for bytes no value of the schema
// holds.
func (sc *Scanner) Resume(b []byte) (int, error) {
	for len(sc.stack) > 0 {
		top := &sc.stack[len(sc.stack)-1]
		s := top.s
		r := reader{b: b, off: sc.off}
		var err error
		switch s.Type {
		case "null":
		case "boolean":
			err = skip(&r, 1, "a boolean")
		case "int", "long", "enum":
			_, err = r.varint(s.Type)
		case "float":
			err = skip(&r, 4, "a float")
		case "double":
			err = skip(&r, 8, "a double")
		case "fixed":
			err = skip(&r, s.Size, "fixed "+s.Name)
		case "bytes", "string":
			err = sc.length(&r, s.Type)
		case "union":
			if top.i == 0 {
				at := r.off
				i, err := r.varint("union branch")
				if err != nil {
					return 0, err
				}
				if i < 0 || i >= int64(len(s.Branches)) {
					return 0, errAt(errMalformed, at, "union branch %d of %s is out of range", i, s)
				}
				sc.off, top.i = r.off, 1
				if err := sc.push(s.Branches[i]); err != nil {
					return 0, err
				}
				continue
			}
		case "record":
			if s.isArray() {
				done, err := sc.ndarray(top, &r)
				if err != nil {
					return 0, err
				}
				sc.off = r.off
				if !done {
					continue
				}
				break
			}
			if top.i < len(s.Fields) {
				top.i++
				if err := sc.push(s.Fields[top.i-1].Type); err != nil {
					return 0, err
				}
				continue
			}
		case "array", "map":
			elem := s.Items
			if s.Type == "map" {
				elem = s.Values
			}
			if top.left == 0 {
				zeroElem := elem
				if s.Type == "map" {
					zeroElem = nil // an entry takes its key's bytes
				}
				n, err := sc.count(&r, s.Type, zeroElem)
				if err != nil {
					return 0, err
				}
				sc.off = r.off
				if n == 0 {
					break
				}
				if zeroElem == nil || !zeroElem.TakesNoBytes() {
					top.left = n
				}
				continue
			}
			if s.Type == "map" && !top.key {
				if err := sc.length(&r, "map key"); err != nil {
					return 0, err
				}
				sc.off, top.key = r.off, true
				continue
			}
			top.left--
			top.key = false
			if err := sc.push(elem); err != nil {
				return 0, err
			}
			continue
		default:
			return 0, errAt(ErrSchema, r.off, "cannot decode type %q", s.Type)
		}
		if err != nil {
			return 0, err
		}
		sc.off = r.off
		sc.stack = sc.stack[:len(sc.stack)-1]
	}
	return sc.off, nil
}

// ndarray scans a part of the YEP-113 record: its shape's blocks and
// dimensions, typestr, data and version, one token at a time. done says
// the record is scanned.
func (sc *Scanner) ndarray(top *scanStep, r *reader) (done bool, err error) {
	switch top.i {
	case 0:
		if top.left == 0 {
			n, err := sc.count(r, "shape", nil)
			if err != nil {
				return false, err
			}
			if n == 0 {
				top.i++
			}
			top.left = n
			return false, nil
		}
		if _, err := r.varint("dimension"); err != nil {
			return false, err
		}
		top.left--
	case 1:
		err = sc.length(r, "typestr")
	case 2:
		err = sc.length(r, "data")
	case 3:
		_, err = r.varint("version")
		done = true
	}
	if err != nil {
		return false, err // the part is read again, whole, when more bytes came
	}
	if top.i > 0 {
		top.i++
	}
	return done, nil
}
