package boundedio

import (
	"bytes"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + i>>12)
	}
	return b
}

// Chunks reads every length exactly, from readers that deliver in pieces:
// a new one through chunks, one that has delivered enough in place.
func TestChunksReadsExactly(t *testing.T) {
	var c Chunks
	for _, n := range []int{0, 1, FirstChunk, FirstChunk + 1, 4*ChunkSize - 1, 4 * ChunkSize, 40*ChunkSize + 17, 3 << 20} {
		want := pattern(n)
		for _, half := range []bool{false, true} {
			for _, c := range []*Chunks{new(Chunks), &c} {
				var r io.Reader = bytes.NewReader(want)
				if half {
					r = iotest.HalfReader(r)
				}
				got, err := c.ReadFull(io.MultiReader(r, bytes.NewReader([]byte("next"))), n)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("n=%d: %d bytes, equal %v, %v", n, len(got), bytes.Equal(got, want), err)
				}
			}
		}
	}
	if _, err := c.ReadFull(bytes.NewReader(pattern(100)), 5*ChunkSize); err != io.ErrUnexpectedEOF {
		t.Errorf("short input: %v", err)
	}
}

// A claim the input does not back costs a small multiple of what arrived.
func TestChunksBoundsUnbackedClaims(t *testing.T) {
	var c Chunks
	for _, sent := range []int{10, 1 << 20, 5 << 20} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := c.ReadFull(bytes.NewReader(pattern(sent)), 60<<20)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("no error")
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(4*sent+2*FirstChunk+ChunkSize) {
			t.Errorf("sent %d of a 60 MiB claim: allocated %d", sent, alloc)
		}
	}
}

// Once its chunks exist, a frame costs one allocation of its size.
func TestChunksAllocateOnce(t *testing.T) {
	var c Chunks
	data := pattern(8 << 20)
	r := bytes.NewReader(data)
	var before, after runtime.MemStats
	c.ReadFull(r, len(data))
	runtime.ReadMemStats(&before)
	for range 4 {
		r.Reset(data)
		c.ReadFull(r, len(data))
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 4; per > uint64(len(data))+4096 {
		t.Errorf("allocated %d per %d-byte frame", per, len(data))
	}
}

// A claim no larger than what the input has already delivered is read in
// place, without chunks; a larger one is still bounded by what arrives.
func TestChunksTrustDeliveredBytes(t *testing.T) {
	var c Chunks
	data := pattern(4 << 20)
	if got, err := c.ReadFull(bytes.NewReader(data), len(data)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("first read: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := c.ReadFull(bytes.NewReader(data), len(data))
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("second read: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(data))+4096 {
		t.Errorf("allocated %d for a %d-byte read in place (through chunks, a quarter more)", alloc, len(data))
	}
	// A claim beyond the 8 MiB delivered goes through chunks again.
	runtime.ReadMemStats(&before)
	if _, err := c.ReadFull(bytes.NewReader(pattern(1<<20)), 60<<20); err == nil {
		t.Fatal("no error for a short claim")
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20+2*FirstChunk+ChunkSize {
		t.Errorf("a 60 MiB claim backed by 1 MiB, after 8 MiB delivered: allocated %d", alloc)
	}
}
