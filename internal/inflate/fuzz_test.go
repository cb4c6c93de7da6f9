package inflate

import (
	"bytes"
	"compress/flate"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// fuzzMaxOut is how much output FuzzInflate compares: several times the
// output buffer (outSize, the window and a chunk), so that the window
// slides again and again, and the input buffer (inSize) is refilled many
// times.
const fuzzMaxOut = 2 << 20

// FuzzInflate holds the reader to compress/flate on any bytes, handed over
// in any pieces: the same output where compress/flate reads the stream,
// an error where it fails, output before an error that agrees with
// compress/flate's as far as both go, and never a panic. how picks the
// source (whole, a byte at a time, half of each read, the last bytes with
// io.EOF, reads of one odd size, or of random sizes, some empty, drawn
// from seed), whether the output is read in small pieces, and whether the
// reader was used on another stream and Reset first. The committed corpus (testdata/fuzz/FuzzInflate,
// written by TestFuzzSeeds) starts from streams of every block kind whose
// outputs run to several hundred KiB, far past the window.
func FuzzInflate(f *testing.F) {
	// Small hand-made streams; the large ones are in testdata.
	f.Add(bitStream(1, 1, 1, 2, 0b1000000, 7, 0, 5), uint8(0), uint64(0))
	f.Add(bitStream(1, 1, 2, 2, 30, 5, 0, 5, 0, 4, 0, 32, 0, 32), uint8(1), uint64(0))
	f.Fuzz(func(t *testing.T, z []byte, how uint8, seed uint64) {
		want, werr := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), fuzzMaxOut))
		r := NewReader(bytes.NewReader(nil))
		if how&0x10 != 0 {
			// Buffers grown by another stream, then Reset.
			r = NewReader(bytes.NewReader(bigStream))
			if _, err := io.Copy(io.Discard, r); err != nil {
				t.Fatal(err)
			}
		}
		r.Reset(fuzzSource(z, how, seed))
		got, gerr := readOutput(io.LimitReader(r, fuzzMaxOut), how, seed)
		if werr == nil {
			if gerr != nil || !bytes.Equal(got, want) {
				t.Fatalf("compress/flate reads %d bytes; inflate %d (%v), the same bytes: %v", len(want), len(got), gerr, bytes.Equal(got, want))
			}
			return
		}
		// Which error is zlib's to say (TestInflateAgreesWithZlib): where
		// a stream is both cut short and corrupt, compress/flate may call
		// it cut and zlib corrupt (the corpus has such a stream).
		if gerr == nil {
			t.Fatalf("compress/flate says %v; inflate reads %d bytes", werr, len(got))
		}
		if n := min(len(got), len(want)); !bytes.Equal(got[:n], want[:n]) {
			t.Fatalf("before their errors (%v; %v), inflate's %d bytes and compress/flate's %d differ", gerr, werr, len(got), len(want))
		}
	})
}

// bigStream is a stream whose decoding grows a Reader's buffers to their
// largest, for a Reset to keep.
var bigStream = func() []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	w.Write(bytes.Repeat([]byte("grown buffers "), 40<<10))
	w.Close()
	return buf.Bytes()
}()

// fuzzSource hands z over as how (its low 3 bits) picks.
func fuzzSource(z []byte, how uint8, seed uint64) io.Reader {
	r := bytes.NewReader(z)
	switch how & 7 % 6 {
	case 1:
		return iotest.OneByteReader(r)
	case 2:
		return iotest.HalfReader(r)
	case 3:
		return iotest.DataErrReader(r)
	case 4: // one odd size, up to 8191 bytes
		size := int(1 + 2*(seed%4096))
		return &chunkReader{r: r, next: func() int { return size }}
	case 5: // random sizes, small to past the input buffer, a few empty
		rnd := rand.New(rand.NewPCG(seed, seed>>32))
		return &chunkReader{r: r, next: func() int {
			switch rnd.IntN(16) {
			case 0:
				return 0
			case 1, 2, 3, 4, 5, 6:
				return 1 + rnd.IntN(16)
			case 7, 8, 9, 10, 11, 12, 13:
				return 1 + rnd.IntN(8<<10)
			}
			return 1 + rnd.IntN(128<<10)
		}}
	}
	return r
}

// chunkReader reads from r at most next() bytes at a time (and, when next
// says 0, nothing, as a reader may).
type chunkReader struct {
	r    io.Reader
	next func() int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	n := c.next()
	if n == 0 || len(p) == 0 {
		return 0, nil
	}
	return c.r.Read(p[:min(n, len(p))])
}

// readOutput reads r to its end: with io.ReadAll, or, when how's bit 3 is
// set, in pieces of one size (1 to 9000 bytes, from seed's top bits) that
// each Read fills as it can.
func readOutput(r io.Reader, how uint8, seed uint64) ([]byte, error) {
	if how&8 == 0 {
		return io.ReadAll(r)
	}
	var out []byte
	p := make([]byte, 1+seed>>48%9000)
	for {
		n, err := r.Read(p)
		out = append(out, p[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
