package deflate

import (
	"math/bits"
	"slices"
)

// huffman builds length-limited Huffman codes: the lengths from the
// symbols' counts, then the canonical codes of RFC 1951 (section 3.2.2),
// bit-reversed for the LSB-first bit writer. Its slices are kept from block
// to block.
type huffman struct {
	syms    []symCount // the used symbols, by count then symbol
	parents []int32    // of the tree's nodes: leaves then internal nodes
	depth   []uint8
	weights []uint64 // of the internal nodes
}

type symCount struct {
	count uint32
	sym   uint16
}

// lengths writes into lens the code length of every symbol of counts,
// none longer than maxBits, and returns them. At least two symbols get a
// code (symbols 0 and 1 are added if fewer are used), as zlib does, so
// that every tree is complete and one bit is sent for a lone symbol.
func (h *huffman) lengths(counts []uint32, lens []uint8, maxBits int) {
	clear(lens)
	h.syms = h.syms[:0]
	for s, c := range counts {
		if c != 0 {
			h.syms = append(h.syms, symCount{c, uint16(s)})
		}
	}
	for s := 0; len(h.syms) < 2; s++ {
		if counts[s] == 0 {
			h.syms = append(h.syms, symCount{1, uint16(s)})
		}
	}
	slices.SortFunc(h.syms, func(a, b symCount) int {
		if a.count != b.count {
			if a.count < b.count {
				return -1
			}
			return 1
		}
		return int(a.sym) - int(b.sym)
	})
	n := len(h.syms)
	// Two queues: the leaves in order, and the internal nodes, made in
	// order of weight. Node i < n is leaf i; node n+k the k-th internal.
	h.parents = slices.Grow(h.parents[:0], 2*n-1)[:2*n-1]
	weights := h.weights[:0]
	leaf, inner := 0, 0
	take := func() int {
		if leaf < n && (inner >= len(weights) || uint64(h.syms[leaf].count) <= weights[inner]) {
			leaf++
			return leaf - 1
		}
		inner++
		return n + inner - 1
	}
	weight := func(node int) uint64 {
		if node < n {
			return uint64(h.syms[node].count)
		}
		return weights[node-n]
	}
	for k := 0; k < n-1; k++ {
		a := take()
		b := take()
		weights = append(weights, weight(a)+weight(b))
		h.parents[a] = int32(n + k)
		h.parents[b] = int32(n + k)
	}
	h.weights = weights
	// Depths from the root (the last node) down.
	h.depth = slices.Grow(h.depth[:0], 2*n-1)[:2*n-1]
	h.depth[2*n-2] = 0
	var blCount [64]int
	maxDepth := 0
	for node := 2*n - 3; node >= 0; node-- {
		d := h.depth[h.parents[node]] + 1
		h.depth[node] = d
		if node < n {
			blCount[d]++
			maxDepth = max(maxDepth, int(d))
		}
	}
	if maxDepth > maxBits {
		// Move leaves up to maxBits keeping the code complete: two
		// leaves at the deepest level become one a level up, and a leaf
		// higher up moves down a level to hold the other (JPEG's
		// adjustment, Annex K.3 of ITU T.81).
		for i := maxDepth; i > maxBits; i-- {
			for blCount[i] > 0 {
				j := i - 2
				for blCount[j] == 0 {
					j--
				}
				blCount[i] -= 2
				blCount[i-1]++
				blCount[j+1] += 2
				blCount[j]--
			}
		}
		maxDepth = maxBits
	}
	// The rarest symbols take the longest codes.
	k := 0
	for d := maxDepth; d >= 1; d-- {
		for c := blCount[d]; c > 0; c-- {
			lens[h.syms[k].sym] = uint8(d)
			k++
		}
	}
}

// codes writes the canonical code of every symbol of lens into codes, bit
// reversed, as the bit writer sends them.
func codes(lens []uint8, codes []uint16) {
	var blCount [16]uint16
	for _, l := range lens {
		blCount[l]++
	}
	blCount[0] = 0
	var next [16]uint16
	code := uint16(0)
	for b := 1; b < 16; b++ {
		code = (code + blCount[b-1]) << 1
		next[b] = code
	}
	for s, l := range lens {
		if l != 0 {
			codes[s] = bits.Reverse16(next[l]) >> (16 - l)
			next[l]++
		} else {
			codes[s] = 0
		}
	}
}
