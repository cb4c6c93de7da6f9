// Package inflate decompresses raw deflate streams (RFC 1951), the
// compression of a deflated .npz member.
//
// It exists for speed. compress/flate and klauspost/compress read their
// input a byte at a time through an io.ByteReader; this reader refills a
// 64-bit bit buffer eight bytes at a time from a buffer of its own, decodes
// a symbol with one table look-up (two for codes longer than the first
// table's reach), looks the next symbol up before writing the current one,
// and copies short matches eight bytes at a stride. On the 64 MiB
// camera-like int16 member of issue #35's benchmark, as numpy wrote it, it
// inflates in 0.35-0.40 s, where Python's zlib (np.load's) takes 0.47-0.54
// s and klauspost/compress 0.62-0.69 s (0.81-0.86 s through bufio).
//
// It refuses what zlib refuses: over-subscribed codes, incomplete ones
// (but a single code of length one), a block with no end-of-block code,
// literal/length codes 286 and 287 and distance codes 30 and 31, a
// distance further back than the output, a stored block whose length and
// its complement disagree, and repeats that run past the code lengths.
// Memory is bounded: a Reader holds 4 KiB of input, and its output buffer
// starts at 16 KiB and grows with what it writes, up to a 32 KiB window
// plus 256 KiB of output, whatever the stream claims.
package inflate

import (
	"encoding/binary"
	"io"
	"math"
	"math/bits"
	"strconv"
)

// CorruptError is the byte offset in the compressed stream, counted from
// where the Reader started reading, at or before which the data is not
// valid deflate.
type CorruptError int64

func (e CorruptError) Error() string {
	return "inflate: the deflate data is corrupt at or before byte " + strconv.FormatInt(int64(e), 10)
}

const (
	window   = 32 << 10  // how far back a distance may reach
	outChunk = 256 << 10 // output decoded between window slides
	maxMatch = 258       // the longest copy one symbol makes
	outSlack = 8         // matches are copied in 8-byte steps past their end
	inSize   = 4 << 10   // compressed bytes held, and read from the source at once, at most
	inPad    = 32        // zero bytes after the input, so that a refill never reads past the buffer
	outSize  = window + outChunk + maxMatch + outSlack
	outFirst = 16 << 10 // the output buffer's first size, before the slack
)

// Table entries, as uint32: the code's length in bits (byte 0), the count
// of extra bits or, for a pointer to a second-level table, that table's
// index bits (bits 8-11), the kind (bits 12-15) and the value (bits
// 16-31): a literal byte, a length or distance base, or the second-level
// table's start.
const (
	kindLiteral = iota // also a distance
	kindLength
	kindEnd
	kindSub
	kindBad
)

const (
	litBits  = 10 // first-level index bits of the literal/length table
	distBits = 8
	lenBits  = 7 // the code-length code's longest code
	litSize  = 1 << 11
	distSize = 1 << 10
)

type entry = uint32

func mkEntry(kind, extra, value uint32) entry { return kind<<12 | extra<<8 | value<<16 }

var (
	lengthBase  = [29]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint32{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	lenOrder    = [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// The symbols' entries without their code lengths, and the fixed codes'
// tables, computed once and only read after.
var (
	litEntries  [288]entry
	distEntries [32]entry
	lenEntries  [19]entry
	fixedLit    [litSize]entry
	fixedDist   [distSize]entry
)

func init() {
	for s := range 256 {
		litEntries[s] = mkEntry(kindLiteral, 0, uint32(s))
	}
	litEntries[256] = mkEntry(kindEnd, 0, 0)
	for i := range lengthBase {
		litEntries[257+i] = mkEntry(kindLength, lengthExtra[i], lengthBase[i])
	}
	litEntries[286], litEntries[287] = mkEntry(kindBad, 0, 0), mkEntry(kindBad, 0, 0)
	for i := range distBase {
		distEntries[i] = mkEntry(kindLiteral, distExtra[i], distBase[i])
	}
	distEntries[30], distEntries[31] = mkEntry(kindBad, 0, 0), mkEntry(kindBad, 0, 0)
	for s := range lenEntries {
		lenEntries[s] = mkEntry(kindLiteral, 0, uint32(s))
	}
	var lens [288]uint8
	for s := range lens {
		switch {
		case s < 144:
			lens[s] = 8
		case s < 256:
			lens[s] = 9
		case s < 280:
			lens[s] = 7
		default:
			lens[s] = 8
		}
	}
	if !build(fixedLit[:], litBits, lens[:], litEntries[:], false) {
		panic("inflate: the fixed literal/length code does not build")
	}
	for s := range 32 {
		lens[s] = 5
	}
	if !build(fixedDist[:], distBits, lens[:32], distEntries[:], false) {
		panic("inflate: the fixed distance code does not build")
	}
}

// build fills t with the decoding table of the canonical code the lengths
// give: a first level of 1<<bits entries, then second-level tables for
// longer codes. It reports false for a code zlib refuses: over-subscribed,
// or incomplete with more than one code or, when complete is set (the
// code-length code), incomplete at all.
func build(t []entry, bits uint, lens []uint8, entries []entry, complete bool) bool {
	var count [16]int
	maxLen := 0
	for _, l := range lens {
		count[l]++
		maxLen = max(maxLen, int(l))
	}
	count[0] = 0
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	if left > 0 && (complete || maxLen > 1) {
		return false
	}
	bad := mkEntry(kindBad, 0, 0)
	size := 1 << bits
	if left > 0 {
		// Only an incomplete code leaves entries unfilled.
		for i := range t[:size] {
			t[i] = bad
		}
	}
	// Symbols in canonical order (by length, then symbol), each with its
	// code, most significant bit first.
	var offs, next [16]int
	for l := 2; l <= 15; l++ {
		offs[l] = offs[l-1] + count[l-1]
		next[l] = (next[l-1] + count[l-1]) << 1
	}
	var order [288]uint16
	var codes [288]uint16
	n := 0
	for s, l := range lens {
		if l != 0 {
			order[offs[l]] = uint16(s)
			offs[l]++
			n++
		}
	}
	for i := range n {
		l := lens[order[i]]
		codes[i] = uint16(next[l])
		next[l]++
	}
	used := size
	for i := 0; i < n; {
		s := int(order[i])
		l := uint(lens[s])
		if l <= bits {
			e := entries[s] | entry(l)
			for j := reverse(uint32(codes[i]), l); j < uint32(size); j += 1 << l {
				t[j] = e
			}
			i++
			continue
		}
		// The codes sharing these first bits, longest last, go in one
		// second-level table as long as that last code needs.
		prefix := uint32(codes[i]) >> (l - bits)
		k := i
		for k+1 < n && uint32(codes[k+1])>>(uint(lens[order[k+1]])-bits) == prefix {
			k++
		}
		sub := uint(lens[order[k]]) - bits
		if used+1<<sub > len(t) {
			return false
		}
		if left > 0 {
			for j := used; j < used+1<<sub; j++ {
				t[j] = bad
			}
		}
		t[reverse(prefix, bits)] = mkEntry(kindSub, uint32(sub), uint32(used)) | entry(bits)
		for ; i <= k; i++ {
			s := int(order[i])
			l := uint(lens[s])
			r := l - bits
			e := entries[s] | entry(l)
			for j := reverse(uint32(codes[i])&(1<<r-1), r); j < 1<<sub; j += 1 << r {
				t[used+int(j)] = e
			}
		}
		used += 1 << sub
	}
	return true
}

// reverse reverses the low n bits of c: deflate sends codes most
// significant bit first into a stream read least significant bit first.
func reverse(c uint32, n uint) uint32 {
	return uint32(bits.Reverse16(uint16(c))) >> (16 - n)
}

// Reader states between calls.
const (
	stateHeader = iota // at a block's header
	stateHuffman
	stateStored
	stateDone
)

// A Reader decompresses a raw deflate stream read from its source. Its
// zero value is not usable; make one with NewReader.
type Reader struct {
	src     io.Reader
	srcDone bool  // src has ended (or failed: srcErr)
	srcErr  error // a failure of src other than its end
	in      []byte
	pos     int   // next input byte not yet in the bit buffer
	end     int   // input bytes held; in[end:end+inPad] are zero
	base    int64 // stream offset of in[0]

	bits  uint64 // least significant bit first; bits above nbits are the stream's next bits or zero
	nbits uint

	out        []byte
	rpos, wpos int // out[rpos:wpos] is decoded but not yet delivered
	limit      int // a symbol starts only below out[limit]

	state  int
	final  bool
	stored int // bytes left in a stored block

	lit  [litSize]entry
	dist [distSize]entry
	cur  *[litSize]entry // the block's tables: the fixed ones or lit and dist
	curD *[distSize]entry

	err error // sticky: io.EOF at the stream's end
}

// NewReader returns a Reader of the deflate stream src holds.
func NewReader(src io.Reader) *Reader {
	f := &Reader{in: make([]byte, inSize+inPad), out: make([]byte, outFirst+maxMatch+outSlack)}
	f.Reset(src)
	return f
}

// Reset makes f read a new stream from src, keeping its buffers.
func (f *Reader) Reset(src io.Reader) {
	*f = Reader{src: src, in: f.in, out: f.out, limit: len(f.out) - maxMatch - outSlack}
	clear(f.in[:inPad])
}

// Read reads decompressed bytes. It returns io.EOF after the last block,
// io.ErrUnexpectedEOF if the source ends before it, a CorruptError for
// data that is not deflate, and the source's own error otherwise.
func (f *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if f.rpos < f.wpos {
			n := copy(p, f.out[f.rpos:f.wpos])
			f.rpos += n
			return n, nil
		}
		if f.err != nil {
			return 0, f.err
		}
		f.step()
	}
}

// step decodes some more, into out or into err.
func (f *Reader) step() {
	if f.wpos >= f.limit {
		// All of out is delivered: grow it, up to the window and a
		// chunk, or keep only the window.
		if len(f.out) < outSize {
			out := make([]byte, min(2*len(f.out), outSize))
			copy(out, f.out[:f.wpos])
			f.out, f.limit = out, len(out)-maxMatch-outSlack
		} else {
			copy(f.out, f.out[f.wpos-window:f.wpos])
			f.rpos, f.wpos = window, window
		}
	}
	switch f.state {
	case stateHeader:
		f.header()
	case stateHuffman:
		f.huffman()
	case stateStored:
		f.copyStored()
	case stateDone:
		f.err = io.EOF
	}
}

// fill reads from the source until at least want input bytes are held
// past pos (or the buffer is full), or the source ends.
func (f *Reader) fill(want int) {
	if f.end-f.pos >= want || f.srcDone || f.pos > f.end {
		return
	}
	// Keep the bytes the bit buffer holds: a stored block gives them back.
	if drop := f.pos - int(f.nbits+7)>>3; drop > 0 {
		n := copy(f.in, f.in[drop:f.end])
		f.base += int64(drop)
		f.pos, f.end = f.pos-drop, n
	}
	for empty := 0; f.end-f.pos < want && f.end < len(f.in)-inPad && !f.srcDone; {
		n, err := f.src.Read(f.in[f.end : len(f.in)-inPad])
		f.end += n
		switch {
		case err != nil:
			f.srcDone = true
			if err != io.EOF {
				f.srcErr = err
			}
		case n > 0:
			empty = 0
		case empty == 100:
			// As bufio does, for a source that never returns
			// anything.
			f.srcDone, f.srcErr = true, io.ErrNoProgress
		default:
			empty++
		}
	}
	clear(f.in[f.end : f.end+inPad])
}

// consumed is the count of stream bits decoded so far, counted from in[0].
func (f *Reader) consumed() int { return f.pos*8 - int(f.nbits) }

// overrun reports whether decoding went past the end of a source that has
// ended, and then sets err (see truncated).
func (f *Reader) overrun() bool {
	if !f.srcDone || f.consumed() <= f.end*8 {
		return false
	}
	f.truncated()
	return true
}

// truncated sets err for a stream cut short: the source's own error, or
// io.ErrUnexpectedEOF if it simply ended.
func (f *Reader) truncated() {
	if f.srcErr != nil {
		f.err = f.srcErr
	} else {
		f.err = io.ErrUnexpectedEOF
	}
}

// corrupt sets err to a CorruptError at the current input byte, unless the
// stream was cut short, which is then the error.
func (f *Reader) corrupt() {
	if f.overrun() {
		return
	}
	f.err = CorruptError(f.base + int64(f.consumed()/8))
}

// refill tops the bit buffer up to at least 56 bits. in[pos:pos+8] is
// always inside the buffer: callers keep pos at most inPad-8 bytes past
// end, and in[end:end+inPad] is zeros. While the source has more, they
// also keep pos far enough before end that every bit they take is the
// stream's.
func (f *Reader) refill() {
	f.bits |= binary.LittleEndian.Uint64(f.in[f.pos:]) << f.nbits
	f.pos += int(63-f.nbits) >> 3
	f.nbits |= 56
}

// take returns the next n bits (n <= 32), for the slow paths (block
// headers); it reports false, with err set, when the stream ends first.
func (f *Reader) take(n uint) (uint32, bool) {
	if f.nbits < n {
		if f.pos > f.end {
			// Every bit past pos is past the end.
			f.truncated()
			return 0, false
		}
		f.refill()
	}
	v := uint32(f.bits & (1<<n - 1))
	f.bits >>= n
	f.nbits -= n
	return v, true
}

// header reads a block's header, and for a dynamic block its codes.
func (f *Reader) header() {
	if f.final {
		f.state = stateDone
		return
	}
	// The longest header, a dynamic block's, is under 300 bytes.
	f.fill(1024)
	h, ok := f.take(3)
	if !ok {
		return
	}
	f.final = h&1 == 1
	switch h >> 1 {
	case 0:
		// To a byte boundary, then give the whole bytes left in the bit
		// buffer back to the input.
		f.take(f.nbits & 7)
		f.pos -= int(f.nbits >> 3)
		f.bits, f.nbits = 0, 0
		if f.overrun() {
			return
		}
		f.fill(4)
		if f.end-f.pos < 4 {
			f.truncated()
			return
		}
		n, nc := binary.LittleEndian.Uint16(f.in[f.pos:]), binary.LittleEndian.Uint16(f.in[f.pos+2:])
		if n != ^nc {
			f.corrupt()
			return
		}
		f.pos += 4
		f.stored, f.state = int(n), stateStored
	case 1:
		f.cur, f.curD, f.state = &fixedLit, &fixedDist, stateHuffman
	case 2:
		if f.dynamic() {
			f.cur, f.curD, f.state = &f.lit, &f.dist, stateHuffman
		}
	default:
		f.corrupt()
	}
}

// dynamic reads a dynamic block's code lengths and builds its tables.
func (f *Reader) dynamic() bool {
	h, ok := f.take(14)
	if !ok {
		return false
	}
	nlit, ndist, nlen := int(h&31)+257, int(h>>5&31)+1, int(h>>10)+4
	if nlit > 286 || ndist > 30 {
		f.corrupt()
		return false
	}
	var lens [286 + 30]uint8
	for i := range nlen {
		l, ok := f.take(3)
		if !ok {
			return false
		}
		lens[lenOrder[i]] = uint8(l)
	}
	var lenTable [1 << lenBits]entry
	if !build(lenTable[:], lenBits, lens[:19], lenEntries[:], true) {
		f.corrupt()
		return false
	}
	clear(lens[:19])
	for i := 0; i < nlit+ndist; {
		if f.nbits < 16 {
			// A code takes 7 bits at most: with fewer than 16 left, the
			// stream was cut only once the bits counted run 8 bytes
			// past its end (overrun, below, catches the rest).
			if f.pos > f.end+8 {
				f.truncated()
				return false
			}
			f.refill()
		}
		e := lenTable[f.bits&(1<<lenBits-1)]
		if e>>12&15 == kindBad {
			f.corrupt()
			return false
		}
		f.bits >>= e & 0xff
		f.nbits -= uint(e & 0xff)
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var v uint8
		switch sym {
		case 16:
			if i == 0 {
				f.corrupt()
				return false
			}
			x, ok := f.take(2)
			if !ok {
				return false
			}
			rep, v = 3+int(x), lens[i-1]
		case 17:
			x, ok := f.take(3)
			if !ok {
				return false
			}
			rep = 3 + int(x)
		default:
			x, ok := f.take(7)
			if !ok {
				return false
			}
			rep = 11 + int(x)
		}
		if i+rep > nlit+ndist {
			f.corrupt()
			return false
		}
		for ; rep > 0; rep-- {
			lens[i] = v
			i++
		}
	}
	if f.overrun() {
		return false
	}
	if lens[256] == 0 || !build(f.lit[:], litBits, lens[:nlit], litEntries[:], false) ||
		!build(f.dist[:], distBits, lens[nlit:nlit+ndist], distEntries[:], false) {
		f.corrupt()
		return false
	}
	return true
}

// copyStored copies a stored block's bytes.
func (f *Reader) copyStored() {
	if f.stored == 0 {
		f.state = stateHeader
		return
	}
	f.fill(1)
	if f.end == f.pos {
		f.truncated()
		return
	}
	n := copy(f.out[f.wpos:f.limit], f.in[f.pos:min(f.end, f.pos+f.stored)])
	f.pos += n
	f.wpos += n
	f.stored -= n
}

// huffman decodes a Huffman-coded block's symbols until the block ends,
// the output chunk is full or the input buffer runs low.
func (f *Reader) huffman() {
	bits, nbits := f.bits, f.nbits
	in, pos := f.in, f.pos
	out, wpos, limit := f.out, f.wpos, f.limit
	lit, dist := f.cur, f.curD
	posLimit, end8 := f.huffmanLimits()
	good := wpos // where the last symbol began: its output is dropped if it read past end8
	state := stateHuffman
	bad := false
	// e is the next symbol's entry, looked up before the current symbol's
	// bytes are written so that the look-up's latency overlaps the write.
	// A refill leaves the bits e was looked up from as they are.
	var e entry
	if pos <= posLimit {
		bits |= binary.LittleEndian.Uint64(in[pos:]) << nbits
		pos += int(63-nbits) >> 3
		nbits |= 56
		e = lit[bits&(1<<litBits-1)]
	}
	for wpos < limit && pos <= posLimit {
		if pos*8-int(nbits) > end8 {
			break
		}
		good = wpos
		bits |= binary.LittleEndian.Uint64(in[pos:]) << nbits
		pos += int(63-nbits) >> 3
		nbits |= 56

		if e>>12&15 == kindSub {
			e = lit[int(e>>16)+int(bits>>litBits&(1<<(e>>8&15)-1))]
		}
		bits >>= e & 0xff
		nbits -= uint(e & 0xff)
		if e>>12&15 == kindLiteral {
			// At least 41 bits are left, enough to look the next
			// symbol up.
			next := lit[bits&(1<<litBits-1)]
			out[wpos] = byte(e >> 16)
			wpos++
			e = next
			continue
		}
		if e>>12&15 != kindLength {
			if e>>12&15 == kindEnd {
				state = stateHeader
			} else {
				bad = true
			}
			break
		}
		extra := uint(e >> 8 & 15)
		length := int(e>>16) + int(bits&(1<<extra-1))
		bits >>= extra
		nbits -= extra

		d := dist[bits&(1<<distBits-1)]
		if d>>12&15 == kindSub {
			d = dist[int(d>>16)+int(bits>>distBits&(1<<(d>>8&15)-1))]
		}
		if d>>12&15 != kindLiteral {
			bad = true
			break
		}
		bits >>= d & 0xff
		nbits -= uint(d & 0xff)
		extra = uint(d >> 8 & 15)
		back := int(d>>16) + int(bits&(1<<extra-1))
		bits >>= extra
		nbits -= extra
		if back > wpos {
			bad = true
			break
		}
		// At least 8 bits are left: refill to look the next symbol up.
		// pos is at most posLimit+7 here, which inPad allows for.
		bits |= binary.LittleEndian.Uint64(in[pos:]) << nbits
		pos += int(63-nbits) >> 3
		nbits |= 56
		e = lit[bits&(1<<litBits-1)]

		from := wpos - back
		switch {
		case back >= 8 && length <= 64:
			// Each 8-byte load reads only bytes written before it; the
			// last store may run up to 7 bytes past the match, into
			// what the next symbol overwrites.
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(out[wpos+i:], binary.LittleEndian.Uint64(out[from+i:]))
			}
		case back >= length:
			copy(out[wpos:wpos+length], out[from:from+length])
		case back >= 8:
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(out[wpos+i:], binary.LittleEndian.Uint64(out[from+i:]))
			}
		default:
			for i := range length {
				out[wpos+i] = out[from+i]
			}
		}
		wpos += length
	}
	if pos*8-int(nbits) > end8 {
		wpos = good
	}
	f.bits, f.nbits, f.pos, f.wpos = bits, nbits, pos, wpos
	f.state = state
	f.endHuffman(bad, posLimit)
}

// huffmanLimits returns how far huffman may read: the position in in
// after which it stops to refill, and the bit past which a symbol's output
// is dropped. While the source has more, it stops 16 bytes short of the
// input's end so that every bit a symbol reads is real; past the source's
// end, it reads the zeros after it and checks the overrun when done. A
// symbol refills twice, the second time at most 7 bytes further: both
// stay inside in's padding. Past the source's end, it stops at the first
// symbol that took bits past it: that symbol's output, from the zeros
// there, is dropped (end8 is the source's end in bits; math.MaxInt while
// the source has more).
func (f *Reader) huffmanLimits() (posLimit, end8 int) {
	if f.srcDone {
		return f.end + inPad - 16, f.end * 8
	}
	return f.end - 16, math.MaxInt
}

// endHuffman reports what stopped huffman once its state is saved: a
// corrupt symbol, reads past the source's end, or the input buffer run
// low (refilled).
func (f *Reader) endHuffman(bad bool, posLimit int) {
	switch {
	case bad:
		f.corrupt()
	case f.overrun():
	case f.pos > posLimit && !f.srcDone:
		f.fill(inSize)
	}
}
