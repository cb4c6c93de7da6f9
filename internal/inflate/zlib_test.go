package inflate

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// dynamicHeader is a final dynamic block's header whose code-length code
// gives code-length symbol a 1 bit and b and c 2 bits (codes 0, 10, 11,
// passed bit-reversed as 0, 1, 3), for nlit literal/length and ndist
// distance codes.
func dynamicHeader(nlit, ndist int, a, b, c int) []uint32 {
	f := []uint32{1, 1, 2, 2, uint32(nlit - 257), 5, uint32(ndist - 1), 5, 14, 4}
	for _, s := range lenOrder[:18] {
		l := uint32(0)
		switch s {
		case a:
			l = 1
		case b, c:
			l = 2
		}
		f = append(f, l, 3)
	}
	return f
}

// The cases where zlib's rules are easy to get wrong, held to zlib itself
// (numpy's inflater): its bytes where it reads the stream to its end, a
// CorruptError where it fails, io.ErrUnexpectedEOF where it wants more.
func TestInflateAgreesWithZlib(t *testing.T) {
	fixedA := bitStream(1, 1, 1, 2, reverse('a'+0x30, 8), 8, 0, 7)
	// 32 KiB stored, then a fixed block copying 3 bytes from 32768 back:
	// length code 257 (0000001), distance code 29 (11101) with 8191.
	far := append([]byte{0x00, 0x00, 0x80, 0xff, 0x7f}, bytes.Repeat([]byte("0123456789abcdef"), 2048)...)
	far = append(far, bitStream(1, 1, 1, 2, reverse(1, 7), 7, reverse(29, 5), 5, 8191, 13, 0, 7)...)
	// A dynamic block: 'a' and end-of-block 1 bit each; code-length
	// symbols 18 (0), 0 (10), 1 (11).
	lits := func(dist ...uint32) []byte {
		f := dynamicHeader(257, 1, 18, 0, 1)
		f = append(f, 0, 1, 86, 7, 3, 2, 0, 1, 127, 7, 0, 1, 9, 7, 3, 2)
		f = append(f, dist...)
		f = append(f, 0, 1, 0, 1, 1, 1) // 'a', 'a', end of block
		return bitStream(f...)
	}
	onlyEnd := func() []byte {
		f := dynamicHeader(257, 1, 18, 0, 1)
		// 256 zeros (138 + 118), then 256 gets 1 bit, the distance none.
		f = append(f, 0, 1, 127, 7, 0, 1, 107, 7, 3, 2, 1, 2, 1, 1)
		return bitStream(f...)
	}
	cases := map[string][]byte{
		"stored, empty":                        {0x01, 0x00, 0x00, 0xff, 0xff},
		"stored, 65535 bytes":                  append([]byte{0x01, 0xff, 0xff, 0x00, 0x00}, bytes.Repeat([]byte{7}, 65535)...),
		"stored, cut":                          append([]byte{0x01, 0xff, 0xff, 0x00, 0x00}, 1, 2, 3),
		"fixed, garbage after the end":         append(bytes.Clone(fixedA), 0xde, 0xad, 0xbe, 0xef),
		"fixed, ends on its last bit":          fixedA,
		"fixed, code 286":                      bitStream(1, 1, 1, 2, reverse(0xc6, 8), 8),
		"fixed, distance 32768":                far,
		"dynamic, one distance code":           lits(3, 2),
		"dynamic, no distance code":            lits(1, 2),
		"dynamic, only end-of-block":           onlyEnd(),
		"dynamic, repeat first":                bitStream(append(dynamicHeader(257, 1, 16, 0, 1), 0, 1, 0, 2)...),
		"dynamic, incomplete code-length code": bitStream(append(dynamicHeader(257, 1, 18, 0, 1)[:10], 2, 3, 2, 3, 2, 3)...),
	}
	var names, hexes []string
	for name, z := range cases {
		names = append(names, name)
		hexes = append(hexes, hex.EncodeToString(z))
	}
	out := pypeer.Run(t, `
import json, zlib
res = []
for line in sys.stdin.read().split():
    d = zlib.decompressobj(-15)
    try:
        b = d.decompress(bytes.fromhex(line))
        res.append({"ok": b.hex(), "eof": d.eof})
    except zlib.error as e:
        res.append({"err": str(e)})
print(json.dumps(res))
`, []byte(strings.Join(hexes, "\n")))
	var zl []struct {
		OK  *string
		EOF bool
		Err string
	}
	if err := json.Unmarshal(out, &zl); err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		got, err := io.ReadAll(NewReader(bytes.NewReader(cases[name])))
		var ce CorruptError
		switch z := zl[i]; {
		case z.Err != "":
			if !errors.As(err, &ce) {
				t.Errorf("%s: zlib says %q, inflate %v", name, z.Err, err)
			}
		case !z.EOF:
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: zlib wants more input, inflate says %v", name, err)
			}
		default:
			if err != nil || hex.EncodeToString(got) != *z.OK {
				t.Errorf("%s: zlib reads %d bytes, inflate %d (%v)", name, len(*z.OK)/2, len(got), err)
			}
		}
	}
}
