package main

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/ndarray"
)

// numpyText is the str or bytes a numpy string scalar (np.str_, np.bytes_:
// an array of shape () and kind U or S, as an object array's pickle holds
// them) stands for, as Python's str() and bytes() of it give it: without
// its trailing NULs. ok is false for anything else, and for a U item that
// holds no Unicode character (numpy cannot make one).
func numpyText(a *ndarray.Array) (v any, ok bool) {
	if len(a.Shape) != 0 || len(a.Data) != a.DType.ItemSize {
		return nil, false
	}
	switch a.DType.Kind {
	case 'S':
		return bytes.TrimRight(a.Data, "\x00"), true
	case 'U':
		var order binary.ByteOrder = binary.LittleEndian
		if a.DType.Order == '>' {
			order = binary.BigEndian
		}
		var sb strings.Builder
		for i := 0; i+4 <= len(a.Data); i += 4 {
			r := order.Uint32(a.Data[i:])
			if r > utf8.MaxRune || (r >= 0xD800 && r < 0xE000) {
				return nil, false
			}
			sb.WriteRune(rune(r))
		}
		return strings.TrimRight(sb.String(), "\x00"), true
	}
	return nil, false
}
