package npybridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// claimAt is what a lying server holds: an object that claims size bytes,
// of which only head (at the start, then zeros to 64 KiB) and tail (at the
// end, after zeros from 128 KiB before the end) can be read; any other read
// ends early, as a body cut short does.
type claimAt struct {
	size       int64
	head, tail []byte
}

const claimHead = 64 << 10

func (c *claimAt) ReadAt(p []byte, off int64) (int, error) {
	if off < claimHead && off+int64(len(p)) <= claimHead {
		clear(p)
		if off < int64(len(c.head)) {
			copy(p, c.head[off:])
		}
		return len(p), nil
	}
	if off >= c.size-2*claimHead && off+int64(len(p)) <= c.size {
		clear(p)
		at := c.size - int64(len(c.tail)) // the tail, after zeros
		for i := range p {
			if k := off + int64(i) - at; k >= 0 {
				p[i] = c.tail[k]
			}
		}
		return len(p), nil
	}
	return 0, io.ErrUnexpectedEOF
}

// lyingNPZ is an archive of one stored member "a" whose NPY header (npy)
// and directory claim it fills an archive of size bytes, of which only the
// header and the directory are there.
func lyingNPZ(npy []byte, size int64) *claimAt {
	local := int64(zipLocalHeaderLen + len("a.npy"))
	// The directory and end records as they would lie at the end.
	var tailLen int64
	for range 2 { // the sizes depend on where the tail starts, its length does not
		csize := size - tailLen - local
		part := zipPart{name: "a.npy", data: npy, usize: uint64(csize)}
		b := buildZip([]zipPart{part}, func(offsets []int64) []zipRecord {
			return []zipRecord{{"a.npy", zipStore, 0, uint64(csize), uint64(csize), 0}}
		}, true)
		dirAt := local + int64(len(npy))
		tail := bytes.Clone(b[dirAt:])
		tailLen = int64(len(tail))
		newAt := size - tailLen
		dirLen := tailLen - zipEnd64Len - zipEnd64LocLen - zipEndLen
		binary.LittleEndian.PutUint64(tail[dirLen+48:], uint64(newAt))
		binary.LittleEndian.PutUint64(tail[dirLen+zipEnd64Len+8:], uint64(newAt+dirLen))
		if csize == size-tailLen-local {
			return &claimAt{size: size, head: b[:dirAt], tail: tail}
		}
	}
	panic("unreachable")
}

// A size that an io.ReaderAt only claims (a remote object's) never sizes an
// allocation: what is read of it goes into memory that grows as the bytes
// arrive, so that an object claiming a terabyte whose server sends 64 KiB
// fails as truncated in a few hundred KiB.
func TestClaimedSizesAllocateNothing(t *testing.T) {
	const size = 1 << 40
	npyC := AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1 << 37})
	npyF := AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1 << 18, 1 << 19})
	npyF = bytes.Replace(npyF, []byte("'fortran_order': False"), []byte("'fortran_order': True "), 1)
	npy := &claimAt{size: size, head: npyC}
	npyFile := &claimAt{size: size, head: npyF}
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"npy rows", func() error { _, err := ReadOptions{}.ReadRowsAt(npy, size, 0, math.MaxInt); return err }},
		{"npy Fortran rows", func() error { _, err := ReadOptions{}.ReadRowsAt(npyFile, size, 10, 1<<18); return err }},
		{"member", func() error {
			z, err := OpenNPZ(lyingNPZ(npyC, size), size)
			if err != nil {
				return err
			}
			_, err = z.Read("a")
			return err
		}},
		{"member rows", func() error {
			z, err := OpenNPZ(lyingNPZ(npyC, size), size)
			if err != nil {
				return err
			}
			_, err = z.ReadRows("a", 5, math.MaxInt)
			return err
		}},
		{"Fortran member rows", func() error {
			z, err := OpenNPZ(lyingNPZ(npyF, size), size)
			if err != nil {
				return err
			}
			_, err = z.ReadRows("a", 5, 1<<18)
			return err
		}},
	} {
		var err error
		alloc := allocated(func() { err = c.read() })
		if !errors.Is(err, ndarray.ErrTruncated) {
			t.Errorf("%s: %v, want ErrTruncated", c.name, err)
		}
		if alloc > 1<<20 {
			t.Errorf("%s: allocated %d bytes for an object that sent 64 KiB", c.name, alloc)
		}
	}
}

// A zip64 end record that claims a directory of a terabyte allocates
// nothing for it: its entries are allocated as their records are read.
func TestHugeDirectoryClaim(t *testing.T) {
	npy := AppendHeader(nil, ndarray.DTypeOf[float64](), []int{4})
	z := lyingNPZ(npy, 1<<41)
	// Claim the directory starts at byte 0 and runs to the end records.
	dirLen := int64(len(z.tail)) - zipEnd64Len - zipEnd64LocLen - zipEndLen
	binary.LittleEndian.PutUint64(z.tail[dirLen+40:], uint64(z.size-int64(len(z.tail))+dirLen))
	binary.LittleEndian.PutUint64(z.tail[dirLen+48:], 0)
	binary.LittleEndian.PutUint64(z.tail[dirLen+24:], 1<<34+7)
	binary.LittleEndian.PutUint64(z.tail[dirLen+32:], 1<<34+7)
	var err error
	alloc := allocated(func() { _, err = OpenNPZ(z, z.size) })
	if err == nil {
		t.Fatal("a directory claiming a terabyte was read")
	}
	if alloc > 1<<20 {
		t.Errorf("allocated %d bytes for a directory claim: %v", alloc, err)
	}
	t.Log(err)
}

// gapAt is an object of which only head and tail are there, with gap bytes
// between them that a server claims and never sends.
type gapAt struct {
	head, tail []byte
	gap        int64
}

func (g *gapAt) size() int64 { return int64(len(g.head)) + g.gap + int64(len(g.tail)) }

func (g *gapAt) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		at := off + int64(n)
		switch tailAt := int64(len(g.head)) + g.gap; {
		case at < int64(len(g.head)):
			n += copy(p[n:], g.head[at:])
		case at >= tailAt && at < g.size():
			n += copy(p[n:], g.tail[at-tailAt:])
		case at >= g.size():
			return n, io.EOF
		default:
			return n, io.ErrUnexpectedEOF
		}
	}
	return n, nil
}

// FuzzClaimedNPZ reads an archive, and the same bytes as an .npy, through
// an io.ReaderAt whose size is only claimed: the input split in two with a
// gap between the halves that the reader claims and never delivers (up to
// petabytes). Whatever the gap, no panic, and memory stays within what the
// bytes delivered can make, as FuzzNPZ's bound.
func FuzzClaimedNPZ(f *testing.F) {
	for i, s := range npzSeeds(f) {
		f.Add(s, uint32(i%3)<<10)
	}
	f.Add(AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1 << 37}), uint32(1<<20))
	f.Fuzz(func(t *testing.T, in []byte, gap uint32) {
		r := &gapAt{head: in[:len(in)/2], tail: in[len(in)/2:], gap: int64(gap) << 20}
		before := allocatedSoFar()
		if z, err := (ReadOptions{}).OpenNPZ(r, r.size()); err == nil {
			for _, name := range z.Names() {
				z.Header(name)
				z.Read(name)
				z.ReadRows(name, 1, -1)
			}
		}
		ReadOptions{}.ReadRowsAt(r, r.size(), 0, math.MaxInt)
		if got, most := allocatedSoFar()-before, uint64(4<<20+3*maxInflateRatio*len(in)); got > most {
			t.Fatalf("%d bytes allocated for %d bytes delivered, %d claimed (at most %d)", got, len(in), r.size(), most)
		}
	})
}

// An end record that claims 2^35 members for a directory of a few bytes, in
// an object that claims 2 TiB, allocates nothing for the claim. (This is
// the case archive/zip cannot hold: its NewReader makes one pointer per
// claimed record whenever the claimed size could hold their headers, 256
// GiB here, before it reads any; see ARCHITECTURE.md.)
func TestClaimedRecordCount(t *testing.T) {
	npy := AppendHeader(nil, ndarray.DTypeOf[float64](), []int{4})
	z := lyingNPZ(npy, 1<<41)
	dirLen := int64(len(z.tail)) - zipEnd64Len - zipEnd64LocLen - zipEndLen
	binary.LittleEndian.PutUint64(z.tail[dirLen+24:], 1<<35)
	binary.LittleEndian.PutUint64(z.tail[dirLen+32:], 1<<35)
	var err error
	alloc := allocated(func() { _, err = OpenNPZ(z, z.size) })
	if err == nil || !strings.Contains(err.Error(), "counts 34359738368 members") {
		t.Errorf("a claim of 2^35 members: %v", err)
	}
	if alloc > 1<<20 {
		t.Errorf("allocated %d bytes for a claim of 2^35 members", alloc)
	}
}
