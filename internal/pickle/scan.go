package pickle

import "encoding/binary"

// Scanner finds where a pickle ends as its bytes arrive, without building
// anything: it skips each opcode by the length of its argument, so that a
// reader can stop at STOP (and not read what follows, as pickle.load does
// not) and then Decode the pickle once. The zero value starts at the
// pickle's first byte.
type Scanner struct {
	pos int
}

// maxScanLine bounds the lines of GLOBAL and INST (a module and a name),
// and the argument lines of protocol 0's opcodes, that Scan waits for.
const maxScanLine = 1 << 16

// Scan advances over the complete opcodes of data, the pickle's bytes
// received so far (from its first), and returns done once it has passed
// STOP, or met an opcode Decode refuses or cannot read (an unknown one, a
// negative or impossible length, a line longer than 64 KiB); end is then
// the bytes Decode is to be given. Until then it wants more bytes; when
// there are no more, Decode of all of them reports what is wrong.
func (s *Scanner) Scan(data []byte) (end int, done bool) {
	for s.pos < len(data) {
		op := data[s.pos]
		var n int // the opcode's bytes, itself included; 0: wait for more
		ok := true
		switch op {
		case opStop:
			s.pos++
			return s.pos, true
		case opMark, opPop, opPopMark, opDup, opNone, opReduce, opAppend, opBuild, opDict,
			opEmptyDict, opAppends, opList, opEmptyList, opObj, opSetItem, opTuple, opEmptyTuple,
			opSetItems, opNewObj, opTuple1, opTuple2, opTuple3, opNewTrue, opNewFalse, opEmptySet,
			opAddItems, opFrozenSet, opNewObjEx, opStackGlobal, opMemoize, opNextBuffer, opReadonlyBuffer:
			n = 1
		case opBinInt1, opBinPut, opBinGet, opProto, opExt1:
			n = 2
		case opBinInt2, opExt2:
			n = 3
		case opBinInt, opLongBinGet, opLongBinPut, opExt4:
			n = 5
		case opBinFloat, opFrame:
			n = 9
		case opLong1, opShortBinString, opShortBinBytes, opShortBinUni:
			n, ok = s.counted(data, 1)
		case opLong4, opBinString, opBinBytes, opBinUnicode:
			n, ok = s.counted(data, 4)
		case opBinUnicode8, opBinBytes8, opByteArray8:
			n, ok = s.counted(data, 8)
		case opGlobal, opInst:
			n, ok = s.lines(data, 2)
		case opFloat, opInt, opLong, opString, opUnicode, opGet, opPut, opPersID:
			n, ok = s.lines(data, 1)
		default:
			ok = false
		}
		if !ok {
			return len(data), true // Decode says what is wrong
		}
		if n == 0 || n > len(data)-s.pos {
			return 0, false
		}
		s.pos += n
	}
	return 0, false
}

// counted returns the bytes of an opcode whose argument is a size-byte
// little-endian length and that many bytes; 0 if its length has not
// arrived; !ok for a length no input could hold.
func (s *Scanner) counted(data []byte, size int) (int, bool) {
	if len(data)-s.pos < 1+size {
		return 0, true
	}
	b := data[s.pos+1 : s.pos+1+size]
	var l uint64
	switch size {
	case 1:
		l = uint64(b[0])
	case 4:
		l = uint64(binary.LittleEndian.Uint32(b))
		if data[s.pos] == opLong4 && int32(l) < 0 {
			return 0, false
		}
	case 8:
		l = binary.LittleEndian.Uint64(b)
	}
	if l > 1<<62 {
		return 0, false
	}
	return 1 + size + int(l), true
}

// lines returns the bytes of an opcode followed by k lines; 0 if they
// have not all arrived; !ok for a line longer than maxScanLine.
func (s *Scanner) lines(data []byte, k int) (int, bool) {
	i := s.pos + 1
	for ; k > 0; k-- {
		j := i
		for j < len(data) && data[j] != '\n' {
			j++
		}
		if j-i > maxScanLine {
			return 0, false
		}
		if j == len(data) {
			return 0, true
		}
		i = j + 1
	}
	return i - s.pos, true
}
