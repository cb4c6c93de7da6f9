package codecerr_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/yaq"
)

// A truncated input is one errors.Is whichever codec reports it, and an
// npy header over the limit is as much ErrTooLarge as an ext 110 payload.
func TestSharedSentinels(t *testing.T) {
	_, extErr := ext110.Unmarshal([]byte{0xc7, 0x10, 110})
	_, _, dialectErr := dialect.Unmarshal([]byte{0x82, 0xa2, 'n', 'd'})
	_, npyErr := npybridge.ReadHeader(bytes.NewReader([]byte("\x93NUMPY\x01\x00\x10")))
	_, _, yaqErr := (&yaq.Schema{Type: "string"}).Decode([]byte{0x10})
	for name, err := range map[string]error{"ext110": extErr, "dialect": dialectErr, "npybridge": npyErr, "yaq": yaqErr} {
		for _, sentinel := range []error{ext110.ErrTruncated, dialect.ErrTruncated, npybridge.ErrTruncated, yaq.ErrTruncated} {
			if !errors.Is(err, sentinel) {
				t.Errorf("%s's %q is not errors.Is %q of every codec", name, err, sentinel)
			}
		}
	}
	if !errors.Is(npybridge.ErrHeaderTooLarge, ext110.ErrTooLarge) {
		t.Error("npybridge.ErrHeaderTooLarge is not ext110.ErrTooLarge")
	}
}
