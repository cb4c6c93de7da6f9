package ndpack

import (
	"bytes"

	"github.com/ndpack/ndpack/npybridge"
)

// Format is a kind of input that ndpack reads, as DetectFormat tells it
// and as the command line names it.
type Format string

// The formats ndpack reads.
const (
	// FormatNPY is NumPy's .npy file (NEP 1), as package npybridge reads it.
	FormatNPY Format = "npy"
	// FormatNPZ is NumPy's .npz archive, a zip file of .npy members.
	FormatNPZ Format = "npz"
	// FormatMsgpack is msgpack: an ext 110 object, a dialect's map, or a
	// message holding them (see MessageOptions).
	FormatMsgpack Format = "msgpack"
)

// DetectFormat says what format the input that head begins is in: NPY by
// numpy's magic string ("\x93NUMPY"), NPZ by a zip archive's first record
// (a member's local header, or the end record of an archive with no
// members), and msgpack otherwise, which has no magic of its own: only
// decoding the input tells it is msgpack (an empty head is msgpack too).
// It looks at no more than the first 6 bytes.
func DetectFormat(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, []byte(npybridge.Magic)):
		return FormatNPY
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return FormatNPZ
	}
	return FormatMsgpack
}

// DetectLen is how many bytes of an input DetectFormat looks at.
const DetectLen = 6
