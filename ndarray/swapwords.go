package ndarray

import (
	"encoding/binary"
	"math/bits"
)

// The in-place byte swaps of SwapBytes for scalars of 2, 4 and 8 bytes.
// Each moves 32 bytes a step as four independent 64-bit words (loads and
// stores of any alignment, one BSWAP or a few shifts each): measured about
// 2.8x faster in the cache than a loop of one word a step. A trailing
// partial scalar is left alone. The three loops are written out because
// a shared one taking the swap as a function is not inlined, and would
// call it for every word.

// swap16s reverses every 2-byte scalar of data.
func swap16s(data []byte) {
	const m = 0x00ff00ff00ff00ff
	i := 0
	for ; i+32 <= len(data); i += 32 {
		s := data[i : i+32 : i+32]
		a := binary.LittleEndian.Uint64(s)
		b := binary.LittleEndian.Uint64(s[8:])
		c := binary.LittleEndian.Uint64(s[16:])
		d := binary.LittleEndian.Uint64(s[24:])
		binary.LittleEndian.PutUint64(s, (a&m)<<8|(a>>8)&m)
		binary.LittleEndian.PutUint64(s[8:], (b&m)<<8|(b>>8)&m)
		binary.LittleEndian.PutUint64(s[16:], (c&m)<<8|(c>>8)&m)
		binary.LittleEndian.PutUint64(s[24:], (d&m)<<8|(d>>8)&m)
	}
	for ; i+2 <= len(data); i += 2 {
		data[i], data[i+1] = data[i+1], data[i]
	}
}

// swap32s reverses every 4-byte scalar of data: reversing a word's 8
// bytes and rotating it by 32 bits reverses each of its halves in place.
func swap32s(data []byte) {
	i := 0
	for ; i+32 <= len(data); i += 32 {
		s := data[i : i+32 : i+32]
		a := binary.LittleEndian.Uint64(s)
		b := binary.LittleEndian.Uint64(s[8:])
		c := binary.LittleEndian.Uint64(s[16:])
		d := binary.LittleEndian.Uint64(s[24:])
		binary.LittleEndian.PutUint64(s, bits.RotateLeft64(bits.ReverseBytes64(a), 32))
		binary.LittleEndian.PutUint64(s[8:], bits.RotateLeft64(bits.ReverseBytes64(b), 32))
		binary.LittleEndian.PutUint64(s[16:], bits.RotateLeft64(bits.ReverseBytes64(c), 32))
		binary.LittleEndian.PutUint64(s[24:], bits.RotateLeft64(bits.ReverseBytes64(d), 32))
	}
	for ; i+4 <= len(data); i += 4 {
		binary.LittleEndian.PutUint32(data[i:], binary.BigEndian.Uint32(data[i:]))
	}
}

// swap64s reverses every 8-byte scalar of data.
func swap64s(data []byte) {
	i := 0
	for ; i+32 <= len(data); i += 32 {
		s := data[i : i+32 : i+32]
		a := binary.BigEndian.Uint64(s)
		b := binary.BigEndian.Uint64(s[8:])
		c := binary.BigEndian.Uint64(s[16:])
		d := binary.BigEndian.Uint64(s[24:])
		binary.LittleEndian.PutUint64(s, a)
		binary.LittleEndian.PutUint64(s[8:], b)
		binary.LittleEndian.PutUint64(s[16:], c)
		binary.LittleEndian.PutUint64(s[24:], d)
	}
	for ; i+8 <= len(data); i += 8 {
		binary.LittleEndian.PutUint64(data[i:], binary.BigEndian.Uint64(data[i:]))
	}
}
