package inflate

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fuzzSeed is one entry of FuzzInflate's committed corpus: a stream, the
// data it decodes to, and how the fuzz target reads it.
type fuzzSeed struct {
	name string
	z    []byte
	data []byte // what z decodes to
	made bool   // z was written by compress/flate (not by hand)
	how  uint8
	seed uint64
}

// seedDir is FuzzInflate's corpus, which go test runs as tests and go test
// -fuzz starts from.
var seedDir = filepath.Join("testdata", "fuzz", "FuzzInflate")

// fuzzSeeds makes the corpus, the same on every run: compress/flate's
// streams at several levels (Huffman-only and stored too) of data whose
// output runs to several hundred KiB, past the window and the output
// buffer (outSize), and a stream made by hand of stored blocks and fixed
// blocks of 258-byte matches at distance 32768, the farthest deflate
// reaches, before and after the window slides.
func fuzzSeeds(t testing.TB) []fuzzSeed {
	r := rand.New(rand.NewPCG(42, 1))
	ramp := make([]byte, 640<<10) // an int16 sawtooth, a sample in 64 off by a little
	for i := 0; i < len(ramp); i += 2 {
		v := uint16(1000 + (i/2)%512)
		if r.IntN(64) == 0 {
			v += uint16(r.IntN(16))
		}
		ramp[i], ramp[i+1] = byte(v), byte(v>>8)
	}
	words := func(n int) []byte {
		vocabulary := []string{"numpy ", "array ", "deflate ", "window ", "the ", "of ", "\n"}
		var b []byte
		for len(b) < n {
			b = append(b, vocabulary[r.IntN(len(vocabulary))]...)
		}
		return b[:n]
	}
	// Geometric bytes (codes longer than the first table's reach), then a
	// long run of zeros that slides the window.
	skewed := make([]byte, 48<<10, 48<<10+400<<10)
	for i := range skewed {
		for r.IntN(2) == 0 && skewed[i] < 255 {
			skewed[i]++
		}
	}
	skewed = append(skewed, make([]byte, 400<<10)...)
	zeros := make([]byte, 1<<20)
	text, shortText, storedText := words(384<<10), words(48<<10), words(40<<10)
	far, farData := farStream(1200)
	made := func(name string, data []byte, level int, how uint8, seed uint64) fuzzSeed {
		return fuzzSeed{name: name, z: deflateWhole(t, data, level), data: data, made: true, how: how, seed: seed}
	}
	return []fuzzSeed{
		made("zeros-level1-one-byte", zeros, 1, 1, 0),
		made("zeros-level9-reset-random", zeros, 9, 0x10|5, 7),
		made("ramp-level1-half", ramp, 1, 2, 0),
		made("ramp-level9-odd-2001-output-778", ramp, 9, 8|4, 777<<48|1000),
		made("words-level9-random", text, 9, 5, 12345),
		made("words-huffman-only-data-eof", shortText, flate.HuffmanOnly, 3, 0),
		made("words-stored-one-byte-output-14", storedText, flate.NoCompression, 8|1, 13<<48),
		made("skewed-level6-whole", skewed, 6, 0, 0),
		{name: "far-random-reset", z: far, data: farData, how: 0x10 | 5, seed: 99},
		{name: "far-odd-8191", z: far, data: farData, how: 4, seed: 4095},
	}
}

// deflateWhole compresses data in one write.
func deflateWhole(t testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// farStream is a stream of a stored 32 KiB block, a fixed block of
// matches 258 bytes long at distance 32768, a stored block after the
// window has slid, and a final fixed block of such matches again with a
// literal and a 3-byte match at distance 32768, and the data it decodes
// to.
func farStream(matches int) (z, data []byte) {
	var w bitWriter
	var out []byte
	stored := func(final uint32, b []byte) {
		w.bits(final, 1)
		w.bits(0, 2)
		w.align()
		w.bytes([]byte{byte(len(b)), byte(len(b) >> 8), ^byte(len(b)), ^byte(len(b) >> 8)})
		w.bytes(b)
		out = append(out, b...)
	}
	match := func(length int) {
		if length == 258 {
			w.bits(reverse(0b11000101, 8), 8) // symbol 285
		} else {
			w.bits(reverse(1, 7), 7) // symbol 257, length 3
		}
		w.bits(reverse(29, 5), 5) // distance code 29: 24577 + 8191
		w.bits(8191, 13)
		for range length {
			out = append(out, out[len(out)-32768])
		}
	}
	first := bytes.Repeat([]byte("the window slides past 32768. "), 1093)[:32768]
	stored(0, first)
	w.bits(0, 1)
	w.bits(1, 2)
	for range matches {
		match(258)
	}
	w.bits(0, 7) // end of block
	stored(0, []byte(strings.Repeat("a stored block after the slide ", 160)))
	w.bits(1, 1)
	w.bits(1, 2)
	for range matches {
		match(258)
	}
	w.bits(reverse('x'+0x30, 8), 8) // literal 'x'
	out = append(out, 'x')
	match(3)
	w.bits(0, 7)
	w.align()
	return w.out, out
}

// bitWriter packs fields least significant bit first, as deflate sends
// them; Huffman codes must be passed bit-reversed.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

func (w *bitWriter) bits(v uint32, n uint) {
	w.acc |= uint64(v) << w.n
	for w.n += n; w.n >= 8; w.n -= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
	}
}

func (w *bitWriter) align() {
	if w.n > 0 {
		w.bits(0, 8-w.n)
	}
}

func (w *bitWriter) bytes(b []byte) { w.out = append(w.out, b...) }

// TestFuzzSeeds checks the committed corpus against fuzzSeeds: the same
// entries, hand-made streams byte for byte, compress/flate's decoding to
// the same data (its bytes may change with Go's compressor), and every
// way of reading a source among them, with outputs past the window and
// the output buffer. With NDPACK_WRITE_FUZZ_SEEDS=1 it writes the corpus
// instead.
func TestFuzzSeeds(t *testing.T) {
	seeds := fuzzSeeds(t)
	if os.Getenv("NDPACK_WRITE_FUZZ_SEEDS") == "1" {
		writeSeeds(t, seeds)
	}
	sources, long := map[uint8]bool{}, 0
	for _, s := range seeds {
		z, how, seed := readSeed(t, filepath.Join(seedDir, s.name))
		if how != s.how || seed != s.seed {
			t.Errorf("%s: how %d, seed %d; fuzzSeeds says %d, %d", s.name, how, seed, s.how, s.seed)
		}
		if !s.made && !bytes.Equal(z, s.z) {
			t.Errorf("%s: the committed stream is not the one farStream makes", s.name)
		}
		got, err := io.ReadAll(flate.NewReader(bytes.NewReader(z)))
		if err != nil || !bytes.Equal(got, s.data) {
			t.Errorf("%s: compress/flate reads %d bytes (%v), not the %d of the data", s.name, len(got), err, len(s.data))
		}
		sources[how&7%6] = true
		if len(s.data) > 2*outSize {
			long++
		}
	}
	if len(sources) != 6 || long < 6 {
		t.Errorf("the corpus reads through %d of the 6 sources and has %d outputs over %d bytes, want 6 and 6", len(sources), long, 2*outSize)
	}
}

func writeSeeds(t *testing.T, seeds []fuzzSeed) {
	if err := os.MkdirAll(seedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		text := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nuint8(%d)\nuint64(%d)\n", s.z, s.how, s.seed)
		if err := os.WriteFile(filepath.Join(seedDir, s.name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readSeed parses a corpus file of FuzzInflate's three arguments.
func readSeed(t *testing.T, path string) (z []byte, how uint8, seed uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a corpus file of three values", path)
	}
	arg := func(line, typ string) string {
		if !strings.HasPrefix(line, typ+"(") || !strings.HasSuffix(line, ")") {
			t.Fatalf("%s: %.40q is not a %s", path, line, typ)
		}
		return line[len(typ)+1 : len(line)-1]
	}
	s, err := strconv.Unquote(arg(lines[1], "[]byte"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	h, err := strconv.ParseUint(arg(lines[2], "uint8"), 10, 8)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	seed, err = strconv.ParseUint(arg(lines[3], "uint64"), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s), uint8(h), seed
}
