package msgarrays

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// TestCheck: each bound a peer's message is held to fails with its class
// and says what; a message within them costs what Cost says.
func TestCheck(t *testing.T) {
	emptyLists := append([]byte{0xdd, 0, 1, 0, 0}, bytes.Repeat([]byte{0x90}, 1<<16)...) // 65536 empty lists
	for _, c := range []struct {
		name string
		in   []byte
		is   error
		says string
	}{
		{"bytes after", []byte{0xc0, 0xc0}, ndarray.ErrMalformed, "1 byte after the message"},
		{"cut short", []byte{0x92, 0x01}, ndarray.ErrTruncated, ""},
		{"too deep", append(bytes.Repeat([]byte{0x91}, MaxDepth+1), 0xc0), ndarray.ErrTooDeep, ""},
		{"too costly", emptyLists, ndarray.ErrTooLarge, "decoding the message of 65541 bytes would take more than 1572904 bytes of memory, 8 times its size and 1 MiB"},
	} {
		_, err := All.Check(c.in, 8, 1<<20)
		var e *Error
		if !errors.Is(err, c.is) || !errors.As(err, &e) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	msg := []byte{0x81, 0xa1, 'x', 0x92, 0x01, 0x02}
	cost, err := All.Check(msg, 8, 1<<20)
	if want, _ := All.Cost(msg, 1<<40); err != nil || cost != want {
		t.Errorf("a message within the bounds: cost %d (want %d), %v", cost, want, err)
	}
}
