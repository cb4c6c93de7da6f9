package deflate

import "encoding/binary"

// The alphabets of RFC 1951, section 3.2.5.
const (
	endOfBlock = 256
	litSyms    = 286 // literal/length symbols a block may use
	distSyms   = 30
	clSyms     = 19 // code-length symbols
)

var (
	lengthSym   [256]uint8 // the length code (0-28, symbol 257+) of length-3
	lengthBase  [29]uint16 // the least length of each length code, less 3
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distLow     [256]uint8 // the distance code of distance-1 below 256
	distHigh    [256]uint8 // the distance code of (distance-1)>>7, from 256
	distBase    [30]uint16 // the least distance of each code, less 1
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

	// clOrder is the order in which a dynamic block's header gives the
	// code-length code's lengths.
	clOrder = [clSyms]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

	fixedLitLens   [288]uint8
	fixedLitCodes  [288]uint16
	fixedDistLens  [distSyms]uint8
	fixedDistCodes [distSyms]uint16
)

func init() {
	base := 0
	for c := 0; c < 28; c++ {
		lengthBase[c] = uint16(base)
		for range 1 << lengthExtra[c] {
			lengthSym[base] = uint8(c)
			base++
		}
	}
	lengthBase[28] = 258 - 3
	lengthSym[255] = 28 // 258 has a code of its own; 257 stays code 27's
	base = 0
	for c := 0; c < distSyms; c++ {
		distBase[c] = uint16(base)
		for range 1 << distExtra[c] {
			if base < 256 {
				distLow[base] = uint8(c)
			} else if base&127 == 0 {
				distHigh[base>>7] = uint8(c)
			}
			base++
		}
	}
	// The fixed code's lengths, by ranges of symbols (RFC 1951, 3.2.6).
	s := 0
	for _, r := range [...]struct {
		end  int
		bits uint8
	}{{144, 8}, {256, 9}, {280, 7}, {288, 8}} {
		for ; s < r.end; s++ {
			fixedLitLens[s] = r.bits
		}
	}
	codes(fixedLitLens[:], fixedLitCodes[:])
	for s := range fixedDistLens {
		fixedDistLens[s] = 5
	}
	codes(fixedDistLens[:], fixedDistCodes[:])
}

// distCode is the distance code of a distance less 1 (0-32767).
func distCode(d uint32) uint8 {
	if d < 256 {
		return distLow[d]
	}
	return distHigh[d>>7]
}

// A token is a literal byte, or a match: matchFlag | (length-3)<<16 |
// (distance-1).
const matchFlag = 1 << 31

// bitWriter appends bits, least significant first, to out.
type bitWriter struct {
	out  []byte
	bits uint64
	n    uint // bits held, under 32 between calls
}

// put sends the nb (at most 32) low bits of v.
func (w *bitWriter) put(v uint32, nb uint) {
	w.bits |= uint64(v) << w.n
	w.n += nb
	if w.n >= 32 {
		w.out = binary.LittleEndian.AppendUint32(w.out, uint32(w.bits))
		w.bits >>= 32
		w.n -= 32
	}
}

// align sends the bits held, padded with zeros to a byte boundary.
func (w *bitWriter) align() {
	for w.n > 0 {
		w.out = append(w.out, byte(w.bits))
		w.bits >>= 8
		w.n -= min(w.n, 8)
	}
	w.bits, w.n = 0, 0
}

// block is the symbols of the block being gathered, with their counts.
type block struct {
	tokens    []uint32
	litCount  [litSyms]uint32
	distCount [distSyms]uint32

	h         huffman
	litLens   [litSyms]uint8
	litCodes  [litSyms]uint16
	distLens  [distSyms]uint8
	distCodes [distSyms]uint16
	allLens   [litSyms + distSyms]uint8
	rle       []uint16 // the header's code-length symbols, extra bits << 8
	clCount   [clSyms]uint32
	clLens    [clSyms]uint8
	clCodes   [clSyms]uint16
}

func (b *block) literal(c byte) {
	b.tokens = append(b.tokens, uint32(c))
	b.litCount[c]++
}

func (b *block) match(length, dist int) {
	b.tokens = append(b.tokens, matchFlag|uint32(length-3)<<16|uint32(dist-1))
	b.litCount[257+int(lengthSym[length-3])]++
	b.distCount[distCode(uint32(dist-1))]++
}

// dataBits is the size of the block's symbols in codes of litLens and
// distLens, extra bits included.
func (b *block) dataBits(litLens, distLens []uint8) int {
	n := 0
	for s, c := range b.litCount {
		n += int(c) * int(litLens[s])
	}
	for c := 257; c < litSyms; c++ {
		n += int(b.litCount[c]) * int(lengthExtra[c-257])
	}
	for s, c := range b.distCount {
		n += int(c) * (int(distLens[s]) + int(distExtra[s]))
	}
	return n
}

// header gathers the dynamic header's code-length symbols of the current
// litLens and distLens, builds their code, and returns the header's size
// in bits and the counts of literal/length, distance and code-length codes
// it declares.
func (b *block) header() (bits, nlit, ndist, ncl int) {
	nlit = litSyms
	for nlit > 257 && b.litLens[nlit-1] == 0 {
		nlit--
	}
	ndist = distSyms
	for ndist > 1 && b.distLens[ndist-1] == 0 {
		ndist--
	}
	all := b.allLens[:nlit+ndist]
	copy(all, b.litLens[:nlit])
	copy(all[nlit:], b.distLens[:ndist])
	b.rle = b.rle[:0]
	b.clCount = [clSyms]uint32{}
	for i := 0; i < len(all); {
		l := all[i]
		run := 1
		for i+run < len(all) && all[i+run] == l {
			run++
		}
		i += run
		if l == 0 {
			for run >= 11 {
				k := min(run, 138)
				b.rle = append(b.rle, 18|uint16(k-11)<<8)
				run -= k
			}
			if run >= 3 {
				b.rle = append(b.rle, 17|uint16(run-3)<<8)
				run = 0
			}
		} else if run >= 4 {
			b.rle = append(b.rle, uint16(l))
			run--
			for run >= 3 {
				k := min(run, 6)
				b.rle = append(b.rle, 16|uint16(k-3)<<8)
				run -= k
			}
		}
		for ; run > 0; run-- {
			b.rle = append(b.rle, uint16(l))
		}
	}
	for _, r := range b.rle {
		b.clCount[r&0xff]++
	}
	b.h.lengths(b.clCount[:], b.clLens[:], 7)
	codes(b.clLens[:], b.clCodes[:])
	ncl = clSyms
	for ncl > 4 && b.clLens[clOrder[ncl-1]] == 0 {
		ncl--
	}
	bits = 5 + 5 + 4 + 3*ncl
	for _, r := range b.rle {
		bits += int(b.clLens[r&0xff]) + int(clExtra(r))
	}
	return bits, nlit, ndist, ncl
}

// clExtra is the count of extra bits of a code-length symbol.
func clExtra(r uint16) uint {
	switch r & 0xff {
	case 16:
		return 2
	case 17:
		return 3
	case 18:
		return 7
	}
	return 0
}

// clear empties the block.
func (b *block) clear() {
	b.tokens = b.tokens[:0]
	b.litCount = [litSyms]uint32{}
	b.distCount = [distSyms]uint32{}
}

// plan builds the block's dynamic codes and its header's, and returns its
// size in bits as dynamic and as fixed codes, end of block included, with
// the counts of codes the dynamic header declares.
func (b *block) plan() (dynamic, fixed, nlit, ndist, ncl int) {
	b.litCount[endOfBlock]++
	b.h.lengths(b.litCount[:], b.litLens[:], 15)
	b.h.lengths(b.distCount[:], b.distLens[:], 15)
	hbits, nlit, ndist, ncl := b.header()
	dynamic = 3 + hbits + b.dataBits(b.litLens[:], b.distLens[:])
	fixed = 3 + b.dataBits(fixedLitLens[:litSyms], fixedDistLens[:])
	b.litCount[endOfBlock]--
	return dynamic, fixed, nlit, ndist, ncl
}

// flush writes the block of span (the bytes its tokens stand for) to w in
// the smallest of the three kinds, and starts the next block.
func (b *block) flush(w *bitWriter, span []byte, final bool) {
	dynamic, fixed, nlit, ndist, ncl := b.plan()
	stored := storedBits(w.n, len(span))
	fin := uint32(0)
	if final {
		fin = 1
	}
	switch {
	case stored <= fixed && stored <= dynamic:
		writeStored(w, span, final)
	case fixed <= dynamic:
		w.put(fin|1<<1, 3)
		b.writeTokens(w, fixedLitLens[:litSyms], fixedLitCodes[:litSyms], fixedDistLens[:], fixedDistCodes[:])
	default:
		codes(b.litLens[:], b.litCodes[:])
		codes(b.distLens[:], b.distCodes[:])
		w.put(fin|2<<1, 3)
		w.put(uint32(nlit-257)|uint32(ndist-1)<<5|uint32(ncl-4)<<10, 14)
		for _, s := range clOrder[:ncl] {
			w.put(uint32(b.clLens[s]), 3)
		}
		for _, r := range b.rle {
			s := r & 0xff
			w.put(uint32(b.clCodes[s]), uint(b.clLens[s]))
			if e := clExtra(r); e != 0 {
				w.put(uint32(r>>8), e)
			}
		}
		b.writeTokens(w, b.litLens[:], b.litCodes[:], b.distLens[:], b.distCodes[:])
	}
	b.clear()
}

// writeTokens sends the block's tokens and its end in the codes given.
func (b *block) writeTokens(w *bitWriter, litLens []uint8, litCodes []uint16, distLens []uint8, distCodes []uint16) {
	litLens, litCodes = litLens[:litSyms], litCodes[:litSyms]
	distLens, distCodes = distLens[:distSyms], distCodes[:distSyms]
	for _, t := range b.tokens {
		if t&matchFlag == 0 {
			w.put(uint32(litCodes[t&0xff]), uint(litLens[t&0xff]))
			continue
		}
		l := (t >> 16) & 0xff
		lc := lengthSym[l]
		s := 257 + int(lc)
		w.put(uint32(litCodes[s])|(l-uint32(lengthBase[lc]))<<litLens[s], uint(litLens[s])+uint(lengthExtra[lc]))
		d := t & 0xffff
		dc := distCode(d)
		w.put(uint32(distCodes[dc])|(d-uint32(distBase[dc]))<<distLens[dc], uint(distLens[dc])+uint(distExtra[dc]))
	}
	w.put(uint32(litCodes[endOfBlock]), uint(litLens[endOfBlock]))
}

// storedBits is the size in bits of n bytes as stored blocks, with held
// bits already waiting in the writer.
func storedBits(held uint, n int) int {
	chunks := max(1, (n+maxStored-1)/maxStored)
	first := (3 + int(held) + 7) / 8 * 8 // the first header, aligned
	return first - int(held) + 32 + (chunks-1)*(8+32) + 8*n
}

const maxStored = 65535

// writeStored writes span as stored blocks, the last one final if final.
func writeStored(w *bitWriter, span []byte, final bool) {
	for {
		k := min(len(span), maxStored)
		fin := uint32(0)
		if final && k == len(span) {
			fin = 1
		}
		w.put(fin, 3)
		w.align()
		w.out = binary.LittleEndian.AppendUint16(w.out, uint16(k))
		w.out = binary.LittleEndian.AppendUint16(w.out, ^uint16(k))
		w.out = append(w.out, span[:k]...)
		span = span[k:]
		if len(span) == 0 {
			return
		}
	}
}
