// Package filekind tells from a file's first bytes what it looks like: one
// of the formats ndpack reads (NPY, a zip archive such as an .npz,
// msgpack) or one it does not (text, a PNG or JPEG image, gzip-compressed
// data, HDF5), so that a failure to read a file can say what the file is
// and what reads it.
package filekind

import (
	"bytes"
	"unicode/utf8"
)

// Kind is what a file looks like.
type Kind int

// The kinds Of tells.
const (
	// Unknown is binary data of no kind Of knows.
	Unknown Kind = iota
	// NPY starts with numpy's magic string, "\x93NUMPY".
	NPY
	// Zip starts with a zip archive's first record, as an .npz does.
	Zip
	// Msgpack starts with a msgpack map, list or ext header. msgpack has no
	// magic: this is a likelihood, not a proof.
	Msgpack
	// Text is UTF-8 without control characters other than whitespace.
	Text
	// PNG is a PNG image.
	PNG
	// JPEG is a JPEG image.
	JPEG
	// Gzip is gzip-compressed data.
	Gzip
	// HDF5 is an HDF5 file (.h5), which h5py writes.
	HDF5
)

// HeadLen is how many first bytes Of looks at, at most.
const HeadLen = 512

var magics = []struct {
	kind  Kind
	magic string
}{
	{NPY, "\x93NUMPY"},
	{Zip, "PK\x03\x04"},
	{Zip, "PK\x05\x06"},
	{PNG, "\x89PNG\r\n\x1a\n"},
	{JPEG, "\xff\xd8\xff"},
	{Gzip, "\x1f\x8b"},
	{HDF5, "\x89HDF\r\n\x1a\n"},
}

// Of tells what the input that head begins looks like, from its first
// HeadLen bytes at most. An empty head is Unknown.
func Of(head []byte) Kind {
	if len(head) == 0 {
		return Unknown
	}
	for _, m := range magics {
		if bytes.HasPrefix(head, []byte(m.magic)) {
			return m.kind
		}
	}
	head = head[:min(len(head), HeadLen)]
	if isText(head) {
		return Text
	}
	switch c := head[0]; {
	case c >= 0x80 && c <= 0x9f, c >= 0xdc && c <= 0xdf: // a map or a list
		return Msgpack
	case c >= 0xc7 && c <= 0xc9, c >= 0xd4 && c <= 0xd8: // an ext
		return Msgpack
	}
	return Unknown
}

// isText reports whether head is UTF-8 (its last character possibly cut)
// holding no control character but tab, newline, carriage return and form
// feed.
func isText(head []byte) bool {
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n <= 1 {
			return len(head) < utf8.UTFMax && !utf8.FullRune(head) // cut at the end
		}
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f') || r == 0x7f {
			return false
		}
		head = head[n:]
	}
	return true
}

// String says what k is, as a sentence names it: "a text file", "a PNG
// image".
func (k Kind) String() string {
	switch k {
	case NPY:
		return "an NPY file"
	case Zip:
		return "a zip archive (an .npz is one)"
	case Msgpack:
		return "msgpack"
	case Text:
		return "a text file"
	case PNG:
		return "a PNG image"
	case JPEG:
		return "a JPEG image"
	case Gzip:
		return "gzip-compressed data"
	case HDF5:
		return "an HDF5 file"
	}
	return "binary data of no kind ndpack knows"
}
