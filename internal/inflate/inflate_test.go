package inflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// samples are inputs of every kind deflate meets: empty, runs, text-like
// repeats, random bytes (stored and Huffman-only blocks), and a
// camera-like int16 ramp with noise (short matches, long codes).
func samples() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300<<10)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	text := make([]byte, 0, 600<<10)
	words := []string{"numpy ", "array ", "deflate ", "window ", "the ", "of ", "\n"}
	for len(text) < 600<<10 {
		text = append(text, words[r.IntN(len(words))]...)
	}
	camera := make([]byte, 1<<20)
	for i := 0; i < len(camera); i += 2 {
		v := uint16(1000 + (i/2)%512 + r.IntN(16))
		camera[i], camera[i+1] = byte(v), byte(v>>8)
	}
	skewed := make([]byte, 200<<10)
	for i := range skewed {
		// Geometric: some symbols get codes longer than the first table.
		b := 0
		for r.IntN(2) == 0 && b < 255 {
			b++
		}
		skewed[i] = byte(b)
	}
	return map[string][]byte{
		"empty":  nil,
		"one":    {42},
		"zeros":  make([]byte, 1<<20),
		"random": random,
		"text":   text,
		"camera": camera,
		"skewed": skewed,
	}
}

func deflate(t testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	// Write in pieces, with a flush between two, so that the stream holds
	// empty stored blocks and block boundaries mid-data too.
	half := len(data) / 2
	w.Write(data[:half])
	w.Flush()
	w.Write(data[half:])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestInflateMatchesCompressFlate(t *testing.T) {
	for name, data := range samples() {
		for _, level := range []int{flate.NoCompression, flate.HuffmanOnly, 1, 6, 9} {
			z := deflate(t, data, level)
			for _, src := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", bytes.NewReader(z)},
				{"byte-at-a-time", iotest.OneByteReader(bytes.NewReader(z))},
				{"half", iotest.HalfReader(bytes.NewReader(z))},
				{"eof-with-data", iotest.DataErrReader(bytes.NewReader(z))},
			} {
				got, err := io.ReadAll(NewReader(src.r))
				if err != nil {
					t.Fatalf("%s at level %d, %s: %v", name, level, src.name, err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("%s at level %d, %s: %d bytes back, not the %d written", name, level, src.name, len(got), len(data))
				}
			}
		}
	}
}

func TestInflateTruncated(t *testing.T) {
	data := samples()["camera"]
	z := deflate(t, data, 6)
	for _, cut := range []int{0, 1, 2, 5, 100, len(z) / 2, len(z) - 2, len(z) - 1} {
		got, err := io.ReadAll(NewReader(bytes.NewReader(z[:cut])))
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d of %d: %v, want io.ErrUnexpectedEOF", cut, len(z), err)
		}
		if !bytes.Equal(got, data[:len(got)]) {
			t.Errorf("cut at %d: the bytes delivered before the error are not the data's", cut)
		}
	}
	// A source's own failure is what the reader reports.
	boom := errors.New("boom")
	_, err := io.ReadAll(NewReader(io.MultiReader(bytes.NewReader(z[:len(z)/2]), iotest.ErrReader(boom))))
	if !errors.Is(err, boom) {
		t.Errorf("failing source: %v, want boom", err)
	}
}

func TestInflateRefusesWhatZlibRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		z    []byte
	}{
		{"block type 3", bitStream(1, 1, 3, 2)},
		{"stored length and complement differ", []byte{0x01, 0x05, 0x00, 0x00, 0x00}},
		// A fixed block whose first symbol, length code 257 (7 bits 0000001)
		// with distance code 0, copies from before the start.
		{"distance before the start", bitStream(1, 1, 1, 2, 0b1000000, 7, 0, 5)},
		{"fixed block with distance code 30", bitStream(1, 1, 1, 2, reverse('a'+0x30, 8), 8, 0b1000000, 7, 0b01111, 5)},
		{"dynamic block with 287 literal/length codes", bitStream(1, 1, 2, 2, 30, 5, 0, 5, 0, 4, 0, 32, 0, 32)},
		{"dynamic block with 31 distance codes", bitStream(1, 1, 2, 2, 0, 5, 30, 5, 0, 4, 0, 32, 0, 32)},
		{"code-length code over-subscribed", bitStream(1, 1, 2, 2, 0, 5, 0, 5, 15, 4, 1, 3, 1, 3, 1, 3, 0, 32, 0, 32, 0, 32)},
	} {
		_, err := io.ReadAll(NewReader(bytes.NewReader(c.z)))
		var ce CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a CorruptError", c.name, err)
		}
		_, ferr := io.ReadAll(flate.NewReader(bytes.NewReader(c.z)))
		if ferr == nil {
			t.Errorf("%s: compress/flate reads it", c.name)
		}
	}
}

func TestInflateNeverReturnsNothing(t *testing.T) {
	// A source that answers 0, nil forever ends with io.ErrNoProgress.
	_, err := io.ReadAll(NewReader(zeroReader{}))
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("got %v, want io.ErrNoProgress", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// bitStream packs (value, bit count) pairs least significant bit first, as
// deflate sends its fields; Huffman codes must be passed bit-reversed.
func bitStream(fields ...uint32) []byte {
	var out []byte
	var acc uint64
	var n uint
	for i := 0; i < len(fields); i += 2 {
		acc |= uint64(fields[i]) << n
		n += uint(fields[i+1])
		for n >= 8 {
			out = append(out, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	if n > 0 {
		out = append(out, byte(acc))
	}
	return out
}
