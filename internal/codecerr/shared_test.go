package codecerr_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/yaq/avro"
)

// A truncated input is one errors.Is whichever codec reports it, and an
// npy header over the limit is as much ErrTooLarge as an ext 110 payload.
func TestSharedSentinels(t *testing.T) {
	_, extErr := ext110.Unmarshal([]byte{0xc7, 0x10, 110})
	_, _, dialectErr := dialect.Unmarshal([]byte{0x82, 0xa2, 'n', 'd'})
	_, npyErr := npybridge.ReadOptions{}.ReadHeader(bytes.NewReader([]byte("\x93NUMPY\x01\x00\x10")))
	_, _, yaqErr := (&avro.Schema{Type: "string"}).Decode([]byte{0x10})
	for name, err := range map[string]error{"ext110": extErr, "dialect": dialectErr, "npybridge": npyErr, "yaq": yaqErr} {
		for _, sentinel := range []error{ndarray.ErrTruncated, ndarray.ErrTruncated, ndarray.ErrTruncated, ndarray.ErrTruncated} {
			if !errors.Is(err, sentinel) {
				t.Errorf("%s's %q is not errors.Is %q of every codec", name, err, sentinel)
			}
		}
	}
	if !errors.Is(ndarray.ErrTooLarge, ndarray.ErrTooLarge) {
		t.Error("ndarray.ErrTooLarge is not ndarray.ErrTooLarge")
	}
}

// Whatever was closed (a yaq, yaqrpc or openpi client, a daemon or server
// that stopped serving), errors.Is(err, net.ErrClosed) recognises it, and
// each message still says which; an npybridge Appender's is os.ErrClosed.
func TestClosedIsOneClass(t *testing.T) {
	dir := t.TempDir()
	a, err := npybridge.AppendOptions{}.OpenAppend(context.Background(), filepath.Join(dir, "a.npy"), ndarray.DTypeOf[float64](), 2)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	appendErr := a.Sync()
	closed := map[string]error{
		"yaq": codecerr.Closed("yaq: closed"), "yaqrpc": codecerr.Closed("yaqrpc: closed"),
	}
	for name, err := range closed {
		for _, sentinel := range []error{os.ErrClosed, net.ErrClosed, closed["yaq"]} {
			if !errors.Is(err, sentinel) {
				t.Errorf("%s (%q) is not errors.Is %q", name, err, sentinel)
			}
		}
	}
	if !errors.Is(appendErr, os.ErrClosed) {
		t.Errorf("a closed Appender's Sync gave %v, not os.ErrClosed", appendErr)
	}
	if closed["yaq"].Error() != "yaq: closed" {
		t.Errorf("message changed: %q", closed["yaq"])
	}
	if errors.Is(closed["yaq"], ndarray.ErrTruncated) {
		t.Error("a closed error matches ErrTruncated")
	}
}
