package filesection

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// truncating is a writer that, at its first write, has the file at path
// truncated to size through another descriptor, as another process
// would, then passes the write on.
type truncating struct {
	t    *testing.T
	path string
	size int64
	done bool
	w    io.Writer
}

func (tw *truncating) Write(p []byte) (int, error) {
	if !tw.done {
		tw.done = true
		hostile.TruncateFile(tw.t, tw.path, tw.size)
	}
	return tw.w.Write(p)
}

// rangeWriter is a file that WriteTo sees as a RangeWriter, as the CLI's
// writers are.
type rangeWriter struct{ f *os.File }

func (r rangeWriter) Write(p []byte) (int, error) { return r.f.Write(p) }
func (r rangeWriter) WriteRange(f *os.File, off int64, n int) (int, error) {
	return CopyRange(r.f, f, off, n)
}

// truncatingRange truncates the source, as truncating does, at its first
// WriteRange.
type truncatingRange struct {
	*truncating
	rw rangeWriter
}

func (tr *truncatingRange) WriteRange(f *os.File, off int64, n int) (int, error) {
	if !tr.done {
		tr.truncating.Write(nil)
	}
	return tr.rw.WriteRange(f, off, n)
}

// sectionFile writes n bytes of a pattern to a new file, and returns its
// name, the file open for reading and the bytes.
func sectionFile(t *testing.T, n int) (string, *os.File, []byte) {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	p := filepath.Join(t.TempDir(), "in.npy")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	f, err := os.Open(p)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return p, f, data
}

// A file truncated by another process while WriteTo copies it from its
// mapping: without SetPanicOnFault the copy died of SIGBUS; now it is an
// error naming the file and the first byte gone.
func TestWriteToTruncatedFile(t *testing.T) {
	if !canMap {
		t.Skip("no mmap")
	}
	for _, c := range []struct {
		name string
		out  func(t *testing.T) io.Writer
	}{
		// bytes.Buffer copies the mapped bytes itself: the fault is a
		// SIGBUS on this goroutine.
		{"into memory", func(*testing.T) io.Writer { return new(bytes.Buffer) }},
		// The kernel copies them for write(2), which fails with EFAULT.
		{"into a file", func(t *testing.T) io.Writer {
			out, err := os.Create(filepath.Join(t.TempDir(), "out"))
			require.NoError(t, err)
			t.Cleanup(func() { out.Close() })
			return out
		}},
		// The kernel moves them file to file (CopyRange), and finds the
		// source ended.
		{"spliced into a file", func(t *testing.T) io.Writer {
			out, err := os.Create(filepath.Join(t.TempDir(), "out"))
			require.NoError(t, err)
			t.Cleanup(func() { out.Close() })
			return rangeWriter{out}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, f, data := sectionFile(t, 2*testWindow+100)
			end := int64(len(data))
			var w io.Writer = &truncating{t: t, path: p, size: 3 * 4096, w: c.out(t)}
			if rw, ok := w.(*truncating).w.(rangeWriter); ok {
				w = &truncatingRange{truncating: w.(*truncating), rw: rw}
			}
			n, err := New(f, 17, end-17).WriteTo(w)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrTruncated), "%v", err)
			assert.False(t, errors.Is(err, io.ErrUnexpectedEOF), "not taken for a file short from the start")
			assert.EqualError(t, err, fmt.Sprintf("read %s: filesection: truncated input at byte 12288: "+
				"it now holds 12288 bytes, and bytes 17 to %d were being read", p, end))
			// What was read before the truncation was there to read.
			assert.Less(t, n, end-17)
		})
	}
}

// The framing read through Map, under Guard: the same.
func TestGuardMap(t *testing.T) {
	p, f, data := sectionFile(t, 2*testWindow+100)
	m, release, err := Map(f, int64(len(data)))
	require.NoError(t, err)
	defer release()
	require.NoError(t, os.Truncate(p, 5000))
	var sum int
	err = Guard(p, m, 0, func() error {
		for _, b := range m[4000:] { // reaches past byte 8191
			sum += int(b)
		}
		return nil
	})
	if !canMap {
		require.NoError(t, err) // read into memory before the truncation
		return
	}
	assert.EqualError(t, err, fmt.Sprintf("read %s: filesection: truncated input at byte 5000: "+
		"it now holds 5000 bytes, and bytes 0 to %d were being read", p, len(data)))
	var fe *Error
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, int64(5000), fe.Offset)

	// Within what is left, reading goes on; other panics are not Guard's.
	assert.NoError(t, Guard(p, m, 0, func() error { sum += int(m[4999]); return nil }))
	assert.PanicsWithValue(t, "boom", func() { Guard(p, m, 0, func() error { panic("boom") }) })
	boom := errors.New("boom")
	assert.Equal(t, boom, Guard(p, m[:4096], 0, func() error { return boom }), "an error of fn's own, the file long enough")
}

func TestShortFileErrors(t *testing.T) {
	p, f, data := sectionFile(t, 2*testWindow+100)
	end := int64(len(data))
	_, err := io.Copy(io.Discard, New(f, end-10, 11))
	assert.EqualError(t, err, fmt.Sprintf("read %s: filesection: file shorter than the section (unexpected EOF) at byte %d: "+
		"the file holds %d bytes, and bytes %d to %d were to be read", p, end, end, end-10, end+1))
	_, err = io.Copy(io.Discard, struct{ io.Reader }{New(f, end-10, 11)})
	assert.EqualError(t, err, fmt.Sprintf("read %s: filesection: file shorter than the section (unexpected EOF) at byte %d: "+
		"the file holds %d bytes, and bytes %d to %d were to be read", p, end, end, end-10, end+1))
	assert.ErrorIs(t, err, ErrShort)
}
