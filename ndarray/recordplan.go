package ndarray

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unsafe"
)

// run is a span of bytes moved from every source record to every
// destination record: a field, or several fields lying back to back on
// both sides.
type run struct {
	src, dst, size int
	swap           int  // width of the scalars whose bytes are reversed, 0 for none
	isBool         bool // each byte becomes 0 or 1, as a Go bool must be
}

type moveKind uint8

const (
	mvWord  moveKind = iota // size 1, 2, 4 or 8: one load and one store
	mvSwap                  // one scalar of size 2, 4 or 8, bytes reversed
	mvCopy                  // size bytes, by copy()
	mvSwapN                 // size bytes of w-byte scalars, each reversed
	mvBool                  // size bytes, each made 0 or 1
)

// move is one step of a plan, done for every record of a chunk before the
// next step: the loops stay tight and the chunk stays in cache.
type move struct {
	kind           moveKind
	src, dst, size int
	w              int // scalar width of mvSwapN
}

// plan moves records between two layouts of the same fields. It is built
// once per call from the dtypes, never per record, and applies to any
// number of records.
type plan struct {
	moves                []move
	srcStride, dstStride int
	// identity: the runs move bytes to the same offsets unchanged and the
	// strides are equal, so the records are the same bytes on both sides
	// (but for the bytes between fields).
	identity bool
	// whole: identity, and the fields cover every byte of the record.
	whole bool
}

// newPlan merges runs that lie back to back on both sides (a packed
// file's x, y, z moving to a struct's x, y, z are one run) and cuts the
// result into word-sized moves, the widest each span allows.
func newPlan(runs []run, srcStride, dstStride int) *plan {
	p := &plan{srcStride: srcStride, dstStride: dstStride, identity: srcStride == dstStride}
	for _, r := range runs {
		if r.src < 0 || r.dst < 0 || r.src+r.size > srcStride || r.dst+r.size > dstStride {
			panic("ndarray: internal error: a record field run outside its record")
		}
		p.identity = p.identity && r.src == r.dst && r.swap == 0 && !r.isBool
	}
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(a, b run) int { return a.dst - b.dst })
	var merged []run
	for _, r := range runs {
		if k := len(merged) - 1; k >= 0 {
			last := &merged[k]
			if last.src+last.size == r.src && last.dst+last.size == r.dst && last.swap == r.swap && last.isBool == r.isBool {
				last.size += r.size
				continue
			}
		}
		merged = append(merged, r)
	}
	p.whole = p.identity && len(merged) == 1 && merged[0].dst == 0 && merged[0].size == dstStride
	for _, r := range merged {
		switch {
		case r.isBool:
			p.moves = append(p.moves, move{kind: mvBool, src: r.src, dst: r.dst, size: r.size})
		case r.swap > 1 && r.size <= 4*r.swap:
			for o := 0; o < r.size; o += r.swap {
				p.moves = append(p.moves, move{kind: mvSwap, src: r.src + o, dst: r.dst + o, size: r.swap})
			}
		case r.swap > 1:
			p.moves = append(p.moves, move{kind: mvSwapN, src: r.src, dst: r.dst, size: r.size, w: r.swap})
		case r.size >= 32:
			p.moves = append(p.moves, move{kind: mvCopy, src: r.src, dst: r.dst, size: r.size})
		default:
			for o := 0; o < r.size; {
				w := 8
				for w > r.size-o {
					w /= 2
				}
				p.moves = append(p.moves, move{kind: mvWord, src: r.src + o, dst: r.dst + o, size: w})
				o += w
			}
		}
	}
	return p
}

// planChunk is the number of records each move is done for before the
// next: 256 records of a few dozen bytes stay in the L1 cache.
const planChunk = 256

// apply moves n records from src to dst. Both must hold n records of
// their stride; it panics otherwise (an internal error).
func (p *plan) apply(dst, src []byte, n int) {
	if n <= 0 || len(p.moves) == 0 {
		return
	}
	if len(src) < n*p.srcStride || len(dst) < n*p.dstStride {
		panic("ndarray: internal error: record plan applied to short data")
	}
	ss, ds := uintptr(p.srcStride), uintptr(p.dstStride)
	for start := 0; start < n; start += planChunk {
		m := min(planChunk, n-start)
		s := unsafe.Pointer(&src[start*p.srcStride])
		d := unsafe.Pointer(&dst[start*p.dstStride])
		for _, mv := range p.moves {
			sp, dp := unsafe.Add(s, mv.src), unsafe.Add(d, mv.dst)
			switch mv.kind {
			case mvWord:
				switch mv.size {
				case 8:
					move8(dp, sp, ds, ss, m)
				case 4:
					move4(dp, sp, ds, ss, m)
				case 2:
					move2(dp, sp, ds, ss, m)
				default:
					move1(dp, sp, ds, ss, m)
				}
			case mvSwap:
				switch mv.size {
				case 8:
					swap8(dp, sp, ds, ss, m)
				case 4:
					swap4(dp, sp, ds, ss, m)
				default:
					swap2(dp, sp, ds, ss, m)
				}
			case mvCopy:
				for i := range uintptr(m) {
					copy(unsafe.Slice((*byte)(unsafe.Add(dp, i*ds)), mv.size), unsafe.Slice((*byte)(unsafe.Add(sp, i*ss)), mv.size))
				}
			case mvSwapN:
				for i := range uintptr(m) {
					b := unsafe.Slice((*byte)(unsafe.Add(dp, i*ds)), mv.size)
					copy(b, unsafe.Slice((*byte)(unsafe.Add(sp, i*ss)), mv.size))
					reverseUnits(b, mv.w)
				}
			case mvBool:
				for i := range uintptr(m) {
					b := unsafe.Slice((*byte)(unsafe.Add(dp, i*ds)), mv.size)
					for j, c := range unsafe.Slice((*byte)(unsafe.Add(sp, i*ss)), mv.size) {
						b[j] = b2u(c != 0)
					}
				}
			}
		}
	}
}

// The word moves load and store through byte arrays, whose alignment is
// 1: the compiler makes one unaligned load where the machine allows it
// and byte loads where it does not, so no access is ever misaligned. The
// offsets advance by addition, not i*stride: a multiply in a loop of a
// load and a store costs a third of it.

func move1(d, s unsafe.Pointer, ds, ss uintptr, n int) {
	for i, so, do := 0, uintptr(0), uintptr(0); i < n; i, so, do = i+1, so+ss, do+ds {
		*(*byte)(unsafe.Add(d, do)) = *(*byte)(unsafe.Add(s, so))
	}
}

func move2(d, s unsafe.Pointer, ds, ss uintptr, n int) {
	for i, so, do := 0, uintptr(0), uintptr(0); i < n; i, so, do = i+1, so+ss, do+ds {
		*(*[2]byte)(unsafe.Add(d, do)) = *(*[2]byte)(unsafe.Add(s, so))
	}
}

func move4(d, s unsafe.Pointer, ds, ss uintptr, n int) {
	for i, so, do := 0, uintptr(0), uintptr(0); i < n; i, so, do = i+1, so+ss, do+ds {
		v := binary.NativeEndian.Uint32((*[4]byte)(unsafe.Add(s, so))[:])
		binary.NativeEndian.PutUint32((*[4]byte)(unsafe.Add(d, do))[:], v)
	}
}

func move8(d, s unsafe.Pointer, ds, ss uintptr, n int) {
	for i, so, do := 0, uintptr(0), uintptr(0); i < n; i, so, do = i+1, so+ss, do+ds {
		v := binary.NativeEndian.Uint64((*[8]byte)(unsafe.Add(s, so))[:])
		binary.NativeEndian.PutUint64((*[8]byte)(unsafe.Add(d, do))[:], v)
	}
}

func swap2(d, s unsafe.Pointer, ds, ss uintptr, n int) {
	for i, so, do := 0, uintptr(0), uintptr(0); i < n; i, so, do = i+1, so+ss, do+ds {
		v := binary.NativeEndian.Uint16((*[2]byte)(unsafe.Add(s, so))[:])
		binary.NativeEndian.PutUint16((*[2]byte)(unsafe.Add(d, do))[:], bits.ReverseBytes16(v))
	}
}

func swap4(d, s unsafe.Pointer, ds, ss uintptr, n int) {
	for i, so, do := 0, uintptr(0), uintptr(0); i < n; i, so, do = i+1, so+ss, do+ds {
		v := binary.NativeEndian.Uint32((*[4]byte)(unsafe.Add(s, so))[:])
		binary.NativeEndian.PutUint32((*[4]byte)(unsafe.Add(d, do))[:], bits.ReverseBytes32(v))
	}
}

func swap8(d, s unsafe.Pointer, ds, ss uintptr, n int) {
	for i, so, do := 0, uintptr(0), uintptr(0); i < n; i, so, do = i+1, so+ss, do+ds {
		v := binary.NativeEndian.Uint64((*[8]byte)(unsafe.Add(s, so))[:])
		binary.NativeEndian.PutUint64((*[8]byte)(unsafe.Add(d, do))[:], bits.ReverseBytes64(v))
	}
}

// reverseUnits reverses the bytes of each w-byte unit of b.
func reverseUnits(b []byte, w int) {
	for o := 0; o+w <= len(b); o += w {
		u := b[o : o+w]
		for i, j := 0, w-1; i < j; i, j = i+1, j-1 {
			u[i], u[j] = u[j], u[i]
		}
	}
}
