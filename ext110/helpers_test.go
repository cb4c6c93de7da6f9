package ext110

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
)

// Hand-assembled msgpack, for inputs no well-behaved packer would write.

func mpStr(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }

func mpBin(b []byte) []byte {
	if len(b) < 256 {
		return append([]byte{0xc4, byte(len(b))}, b...)
	}
	h := []byte{0xc6, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[1:], uint32(len(b)))
	return append(h, b...)
}

func mpMap(kv ...[]byte) []byte {
	out := []byte{0x80 | byte(len(kv)/2)}
	for _, x := range kv {
		out = append(out, x...)
	}
	return out
}

// ext8 frames a payload as ext type 110 with an ext8 header.
func ext8(payload []byte) []byte {
	return append([]byte{0xc7, byte(len(payload)), ExtType}, payload...)
}

func ext32(payload []byte) []byte {
	h := []byte{0xc9, 0, 0, 0, 0, ExtType}
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	return append(h, payload...)
}

// unhex reads hex with spaces allowed.
func unhex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
