package zarr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"io"
	"sync"

	"github.com/ndpack/ndpack/internal/deflate"
	"github.com/ndpack/ndpack/internal/inflate"
	"github.com/ndpack/ndpack/ndarray"
)

// The encoders of each level (1-9), reused from chunk to chunk: an
// encoder's tables take about 700 KiB. The module's own deflate encoder
// writes numcodecs' zlib chunks within 0.1% of the size zlib (zarr-python)
// gives them at the same level, and Huffman codes a chunk of noise (a
// camera's float32, whose low mantissa bytes are random) whole, as the
// search for matches gains nothing there: see deflate.Encoder.Append. The
// bytes depend on the chunk alone: the store holds the same bytes from
// run to run and whatever the cores.
var encoders [10]sync.Pool

// EncodeChunk appends the stored form of chunk, one chunk's bytes
// (ChunkSize of them, in the array's order, an edge chunk padded), to
// dst: the bytes themselves without a compressor, numcodecs' zlib stream
// with one. It fails with an *ndarray.Error wrapping errChunk when chunk
// is not ChunkSize bytes.
func (m *Meta) EncodeChunk(dst, chunk []byte) ([]byte, error) {
	if len(chunk) != m.ChunkSize() {
		return dst, errAt(errChunk, -1, "a chunk of %d bytes; the chunks of shape %s of %s hold %d", len(chunk), formatShape(m.Chunks), m.DType, m.ChunkSize())
	}
	if m.Compressor == nil {
		return append(dst, chunk...), nil
	}
	level := m.Compressor.Level
	if level == -1 {
		level = 6 // zlib's default
	}
	if level < 0 || level > 9 {
		return dst, errAt(ErrUnsupported, -1, "zlib level %d", m.Compressor.Level)
	}
	pool := &encoders[level]
	enc, _ := pool.Get().(*deflate.Encoder)
	if enc == nil {
		enc, _ = deflate.NewEncoder(level)
	}
	defer pool.Put(enc)
	return enc.AppendZlib(dst, chunk), nil
}

var inflaters sync.Pool // of *inflate.Reader

// DecodeChunk decodes stored, a chunk as a store holds it, into dst,
// which must be ChunkSize bytes: without a compressor stored must be
// exactly that; with zlib it must be a zlib stream that inflates to
// exactly that, whose Adler-32 matches. A stream that would inflate to
// more is refused as soon as it passes dst's length, so that a chunk of a
// few bytes cannot make more than its array's chunk (a zlib bomb).
// key names the chunk in errors. It fails with an *ndarray.Error
// wrapping errChunk.
func (m *Meta) DecodeChunk(dst, stored []byte, key string) error {
	if len(dst) != m.ChunkSize() {
		return errAt(errChunk, -1, "chunk %q: a buffer of %d bytes for a chunk of %d", key, len(dst), m.ChunkSize())
	}
	if m.Compressor == nil {
		if len(stored) != len(dst) {
			return errAt(errChunk, -1, "chunk %q holds %d bytes; a chunk of shape %s of %s holds %d", key, len(stored), formatShape(m.Chunks), m.DType, len(dst))
		}
		copy(dst, stored)
		return nil
	}
	return inflateChunk(dst, stored, key)
}

// inflateChunk inflates the zlib stream z into exactly dst.
func inflateChunk(dst, z []byte, key string) error {
	if len(z) < 6 {
		return errAt(errChunk, -1, "chunk %q holds %d bytes, too few for a zlib stream", key, len(z))
	}
	cmf, flg := z[0], z[1]
	switch {
	case cmf&0x0f != 8 || cmf>>4 > 7:
		return errAt(errChunk, 0, "chunk %q is not a zlib stream of deflate data (its first byte is 0x%02x)", key, cmf)
	case (uint16(cmf)<<8|uint16(flg))%31 != 0:
		return errAt(errChunk, 0, "chunk %q: its zlib header's check bits are wrong (0x%02x 0x%02x)", key, cmf, flg)
	case flg&0x20 != 0:
		return errAt(errChunk, 1, "chunk %q asks for a preset zlib dictionary, which numcodecs never sets", key)
	}
	f, _ := inflaters.Get().(*inflate.Reader)
	src := bytes.NewReader(z[2 : len(z)-4])
	if f == nil {
		f = inflate.NewReader(src)
	} else {
		f.Reset(src)
	}
	defer inflaters.Put(f)
	n, err := io.ReadFull(f, dst)
	if err == nil {
		err = endOfStream(f)
	}
	var ce inflate.CorruptError
	switch {
	case errors.As(err, &ce):
		return errAt(errChunk, 2+int64(ce), "chunk %q: the deflate data is corrupt, after %d bytes inflated", key, n)
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return errAt(errChunk, int64(len(z)), "chunk %q inflates to %d bytes, fewer than the %d of its chunk", key, n, len(dst))
	case errors.Is(err, errMore):
		return errAt(errChunk, -1, "chunk %q inflates to more than the %d bytes of its chunk", key, len(dst))
	case err != nil:
		return wrapErr(errChunk, err, "chunk %q", key)
	}
	if want := binary.BigEndian.Uint32(z[len(z)-4:]); adler32.Checksum(dst) != want {
		return errAt(errChunk, int64(len(z)-4), "chunk %q: its Adler-32 is %08x, its data's %08x", key, want, adler32.Checksum(dst))
	}
	return nil
}

var errMore = errors.New("more data")

// endOfStream checks that the inflater has nothing more to give.
func endOfStream(f *inflate.Reader) error {
	var one [1]byte
	for try := 0; try < 100; try++ {
		k, err := f.Read(one[:])
		switch {
		case k > 0:
			return errMore
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
	return errMore
}

// formatShape is ndarray.FormatShape.
func formatShape(s []int) string { return ndarray.FormatShape(s) }
