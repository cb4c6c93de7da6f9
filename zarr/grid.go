package zarr

import (
	"strconv"
	"strings"
)

// Grid returns how many chunks the array has along each dimension: the
// shape divided by the chunks, rounded up (0 along an empty dimension).
// A 0-d array has one chunk, whose grid has no dimensions.
func (m *Meta) Grid() []int {
	g := make([]int, len(m.Shape))
	for i, s := range m.Shape {
		g[i] = (s + m.Chunks[i] - 1) / m.Chunks[i]
	}
	return g
}

// NumChunks returns how many chunks the grid holds: the product of Grid
// (one for a 0-d array, none for an empty one).
func (m *Meta) NumChunks() int {
	n := 1
	for _, g := range m.Grid() {
		n *= g // Validate bounds the shape's product, and so the grid's
	}
	return n
}

// ChunkKey returns the key of the chunk at grid index idx, under the
// array's own path: its indices joined by the dimension separator
// ("0.3.1"), "0" for a 0-d array's one chunk.
func (m *Meta) ChunkKey(idx []int) string {
	if len(idx) == 0 {
		return "0"
	}
	var b strings.Builder
	for i, v := range idx {
		if i > 0 {
			b.WriteByte(m.separator())
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

// ChunkSize returns the bytes of one chunk as it is before compression:
// the chunks' elements times the item size, an edge chunk's padding
// included.
func (m *Meta) ChunkSize() int {
	n := m.DType.ItemSize
	for _, c := range m.Chunks {
		n *= c // Validate checked that the chunk's bytes count in an int
	}
	return n
}

// maxStored is the most bytes a stored chunk may take: its size, plus
// what deflate and zlib add to data that does not compress (5 bytes per
// 64 KiB stored block, 6 of header and checksum), with room to spare.
func (m *Meta) maxStored() int {
	n := m.ChunkSize()
	if m.Compressor == nil {
		return n
	}
	return n + n>>8 + 1024
}

// rowBytes is the bytes of one row (an element of the first dimension)
// of the array: the whole array for a 0-d one.
func (m *Meta) rowBytes() int {
	n := m.DType.ItemSize
	for _, s := range m.Shape[min(1, len(m.Shape)):] {
		n *= s
	}
	return n
}

// rows is the array's first dimension, 1 for a 0-d array.
func (m *Meta) rows() int {
	if len(m.Shape) == 0 {
		return 1
	}
	return m.Shape[0]
}

// bandRows is how many rows a chunk spans: the rows read or written
// together.
func (m *Meta) bandRows() int {
	if len(m.Chunks) == 0 {
		return 1
	}
	return m.Chunks[0]
}
