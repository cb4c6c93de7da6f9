package npybridge

import (
	"bytes"
	"sync"

	"github.com/ndpack/ndpack/ndarray"
)

// The header np.save writes, {'descr': '<f8', 'fortran_order': False,
// 'shape': (10,), } and its padding, is read without the general Python
// literal parser, which builds a tree of values for it: reading many small
// files, that tree was most of the time and of the 17 allocations a header
// cost. Anything else, or anything unusual in this form, goes to the
// general parser, which decides.

// headerBufs holds the buffers headers are read into: a buffer handed to
// an io.Reader escapes to the heap, and reusing it keeps that allocation
// out of every read.
var headerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// plainTypestrs maps the typestrs of plain numeric dtypes, as np.save
// writes them, to their DType, so that the fast path looks them up
// without converting bytes to a string. It is built once and only read.
var plainTypestrs = func() map[string]ndarray.DType {
	m := map[string]ndarray.DType{}
	for _, kind := range []byte{'b', 'i', 'u', 'f', 'c'} {
		for _, size := range []string{"1", "2", "4", "8", "16"} {
			for _, order := range []byte{'<', '>', '|'} {
				s := string(order) + string(kind) + size
				if dt, err := ndarray.ParseTypestr(s); err == nil && dt.String() == s {
					m[s] = dt
				}
			}
		}
	}
	return m
}()

// parseCanonical reads text as the header np.save writes for a plain
// numeric dtype, filling h's DType, FortranOrder and Shape; ok is false,
// and h unchanged, for any other text.
func (h *Header) parseCanonical(text []byte) (ok bool) {
	rest, ok := cutPrefix(text, "{'descr': '")
	if !ok {
		return false
	}
	end := bytes.IndexByte(rest, '\'')
	if end < 0 {
		return false
	}
	dt, ok := plainTypestrs[string(rest[:end])]
	if !ok {
		return false
	}
	rest = rest[end:]
	var fortran bool
	switch {
	case hasPrefix(rest, "', 'fortran_order': False, 'shape': ("):
		rest = rest[len("', 'fortran_order': False, 'shape': ("):]
	case hasPrefix(rest, "', 'fortran_order': True, 'shape': ("):
		rest, fortran = rest[len("', 'fortran_order': True, 'shape': ("):], true
	default:
		return false
	}
	// Dimensions: "" for (), "10," for (10,), "2, 3" for (2, 3). Each is
	// digits without a leading zero (but "0"), small enough not to
	// overflow: anything else is the general parser's to judge.
	var dims [32]int
	n := 0
	for len(rest) > 0 && rest[0] != ')' {
		if n == len(dims) {
			return false
		}
		i, v := 0, 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			if i == 18 || i == 1 && rest[0] == '0' {
				return false
			}
			v = v*10 + int(rest[i]-'0')
			i++
		}
		if i == 0 {
			return false
		}
		dims[n], n, rest = v, n+1, rest[i:]
		switch {
		case hasPrefix(rest, ", ") && n > 1 || hasPrefix(rest, ", ") && len(rest) > 2 && rest[2] != ')':
			rest = rest[2:]
		case hasPrefix(rest, ",)") && n == 1:
			rest = rest[1:]
		case hasPrefix(rest, ")") && n > 1:
		default:
			return false
		}
	}
	rest, ok = cutPrefix(rest, "), }")
	if !ok {
		return false
	}
	for _, c := range rest[:max(len(rest)-1, 0)] {
		if c != ' ' {
			return false
		}
	}
	if len(rest) == 0 || rest[len(rest)-1] != '\n' {
		return false
	}
	if _, err := ndarray.ByteSize(dt, dims[:n]); err != nil {
		return false // an overflow: the general parser says so
	}
	h.DType, h.FortranOrder, h.Shape = dt, fortran, append(make([]int, 0, n), dims[:n]...)
	return true
}

func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

func cutPrefix(b []byte, s string) ([]byte, bool) {
	if !hasPrefix(b, s) {
		return b, false
	}
	return b[len(s):], true
}
