package npybridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// cutReader yields b, then an error that wraps io.ErrUnexpectedEOF, as a
// reader of a link or a decompressor that names itself in its errors does.
type cutReader struct{ b []byte }

func (c *cutReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, fmt.Errorf("link: %w", io.ErrUnexpectedEOF)
	}
	n := copy(p, c.b)
	c.b = c.b[n:]
	return n, nil
}

// TestWrappedEOFIsTruncated checks that data cut short by a reader whose
// error wraps io.ErrUnexpectedEOF is reported as ndarray.ErrTruncated at the first
// data byte, as the header already is, whichever way the data is read.
func TestWrappedEOFIsTruncated(t *testing.T) {
	dt, err := ndarray.ParseDType("<f8")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ndarray.New(dt, []int{4}, make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := Write(&file, a); err != nil {
		t.Fatal(err)
	}
	full := file.Bytes()
	cut := full[:len(full)-5] // 128-byte header, 27 of the 32 data bytes
	reads := map[string]func(io.Reader) (*ndarray.Array, error){
		"Read":     ReadOptions{}.Read,
		"ReadInto": func(r io.Reader) (*ndarray.Array, error) { return ReadOptions{}.ReadInto(r, make([]byte, 64)) },
	}
	for name, read := range reads {
		_, err := read(&cutReader{b: cut})
		var e *ndarray.Error
		if !errors.Is(err, ndarray.ErrTruncated) || !errors.As(err, &e) || e.Offset != 128 {
			t.Errorf("%s: got %v, want an *ndarray.Error wrapping ndarray.ErrTruncated at byte 128", name, err)
		}
	}
	// The header cut by the same reader is ndarray.ErrTruncated already.
	_, err = Read(&cutReader{b: full[:20]})
	if !errors.Is(err, ndarray.ErrTruncated) {
		t.Errorf("header: got %v, want ndarray.ErrTruncated", err)
	}
}
