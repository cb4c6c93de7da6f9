package filekind

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	for head, want := range map[string]Kind{
		"":                                    Unknown,
		"\x93NUMPY\x01\x00v\x00{'descr'":      NPY,
		"PK\x03\x04\x14\x00":                  Zip,
		"PK\x05\x06\x00\x00":                  Zip,
		"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR": PNG,
		"\xff\xd8\xff\xe0\x00\x10JFIF":        JPEG,
		"\x1f\x8b\x08\x08":                    Gzip,
		"\x89HDF\r\n\x1a\n\x00":               HDF5,
		"hello\n":                             Text,
		"a,b\r\n1,2\t3\f":                     Text,
		"caf\xc3\xa9 na\xc3":                  Text, // the last character cut by the head's end
		"caf\xc3 x":                           Unknown,
		"\x83\xa6method\xa7measure":           Msgpack,
		"\x92\x01\x02":                        Msgpack,
		"\xdf\x00\x00\x00\x01":                Msgpack,
		"\xc7\x20\x6e":                        Msgpack,
		"\xd8\x6e":                            Msgpack,
		"\x00\x01\x02":                        Unknown,
		"hi\x00there":                         Unknown,
		"\x07":                                Unknown,
	} {
		assert.Equal(t, want, Of([]byte(head)), "%q", head)
	}
	// Only HeadLen bytes are looked at: binary past them is not seen.
	long := append(bytes.Repeat([]byte("a"), HeadLen), 0)
	assert.Equal(t, Text, Of(long))
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{
		Unknown: "binary data of no kind ndpack knows", NPY: "an NPY file", Zip: "a zip archive (an .npz is one)",
		Msgpack: "msgpack", Text: "a text file", PNG: "a PNG image", JPEG: "a JPEG image",
		Gzip: "gzip-compressed data", HDF5: "an HDF5 file",
	} {
		assert.Equal(t, want, k.String())
	}
}
