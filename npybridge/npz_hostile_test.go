package npybridge

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
)

// zipPart is a member of a hand-made archive: its local header and data.
type zipPart struct {
	name   string
	method uint16
	data   []byte // as stored: deflated when method is 8
	usize  uint64 // the decompressed size the headers state
	crc    uint32
	extra  []byte // of the local header only
}

// zipRecord is a central directory record of a hand-made archive.
type zipRecord struct {
	name         string
	method       uint16
	crc          uint32
	csize, usize uint64
	offset       int64 // of the local header it points at
}

// storedPart is b stored under name.
func storedPart(name string, b []byte) zipPart {
	return zipPart{name: name, data: b, usize: uint64(len(b)), crc: crc32.ChecksumIEEE(b)}
}

// deflatedPart is b deflated at the given level under name.
func deflatedPart(name string, b []byte, level int) zipPart {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, level)
	w.Write(b)
	w.Close()
	return zipPart{name: name, method: zipDeflate, data: buf.Bytes(), usize: uint64(len(b)), crc: crc32.ChecksumIEEE(b)}
}

// recordsOf are the honest records of parts at offsets.
func recordsOf(parts []zipPart, offsets []int64) []zipRecord {
	var rs []zipRecord
	for i, p := range parts {
		rs = append(rs, zipRecord{p.name, p.method, p.crc, uint64(len(p.data)), p.usize, offsets[i]})
	}
	return rs
}

// buildZip lays the parts out one after another and then a directory of
// the records that records makes of the parts' offsets, as a hostile
// writer may. With zip64 (or more than 65,534 records) the sizes, offsets
// and count go in zip64 fields and end record.
func buildZip(parts []zipPart, records func(offsets []int64) []zipRecord, zip64 bool) []byte {
	var b []byte
	le := binary.LittleEndian
	var offsets []int64
	for _, p := range parts {
		offsets = append(offsets, int64(len(b)))
		b = le.AppendUint32(b, zipLocalSig)
		b = le.AppendUint16(b, 20)
		b = le.AppendUint16(b, 0)
		b = le.AppendUint16(b, p.method)
		b = le.AppendUint32(b, 0) // time, date
		b = le.AppendUint32(b, p.crc)
		b = le.AppendUint32(b, uint32(min(uint64(len(p.data)), 0xffffffff)))
		b = le.AppendUint32(b, uint32(min(p.usize, 0xffffffff)))
		b = le.AppendUint16(b, uint16(len(p.name)))
		b = le.AppendUint16(b, uint16(len(p.extra)))
		b = append(b, p.name...)
		b = append(b, p.extra...)
		b = append(b, p.data...)
	}
	recs := records(offsets)
	zip64 = zip64 || len(recs) >= 0xffff
	dirAt := int64(len(b))
	for _, r := range recs {
		var extra []byte
		cs, us, off := uint32(r.csize), uint32(r.usize), uint32(r.offset)
		if zip64 {
			extra = le.AppendUint16(extra, 1)
			extra = le.AppendUint16(extra, 24)
			extra = le.AppendUint64(extra, r.usize)
			extra = le.AppendUint64(extra, r.csize)
			extra = le.AppendUint64(extra, uint64(r.offset))
			cs, us, off = 0xffffffff, 0xffffffff, 0xffffffff
		}
		b = le.AppendUint32(b, zipCentralSig)
		b = le.AppendUint16(b, 45)
		b = le.AppendUint16(b, 45)
		b = le.AppendUint16(b, 0)
		b = le.AppendUint16(b, r.method)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, r.crc)
		b = le.AppendUint32(b, cs)
		b = le.AppendUint32(b, us)
		b = le.AppendUint16(b, uint16(len(r.name)))
		b = le.AppendUint16(b, uint16(len(extra)))
		b = le.AppendUint16(b, 0)   // comment
		b = le.AppendUint16(b, 0)   // disk
		b = le.AppendUint16(b, 0)   // internal attributes
		b = le.AppendUint32(b, 0)   // external attributes
		b = le.AppendUint32(b, off) // local header
		b = append(b, r.name...)
		b = append(b, extra...)
	}
	dirLen := int64(len(b)) - dirAt
	count, size, at := uint16(len(recs)), uint32(dirLen), uint32(dirAt)
	if zip64 {
		end64 := int64(len(b))
		b = le.AppendUint32(b, zipEnd64Sig)
		b = le.AppendUint64(b, zipEnd64Len-12)
		b = le.AppendUint16(b, 45)
		b = le.AppendUint16(b, 45)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, uint64(len(recs)))
		b = le.AppendUint64(b, uint64(len(recs)))
		b = le.AppendUint64(b, uint64(dirLen))
		b = le.AppendUint64(b, uint64(dirAt))
		b = le.AppendUint32(b, zipEnd64LocSig)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, uint64(end64))
		b = le.AppendUint32(b, 1)
		count, size, at = 0xffff, 0xffffffff, 0xffffffff
	}
	b = le.AppendUint32(b, zipEndSig)
	b = le.AppendUint32(b, 0) // disks
	b = le.AppendUint16(b, count)
	b = le.AppendUint16(b, count)
	b = le.AppendUint32(b, size)
	b = le.AppendUint32(b, at)
	b = le.AppendUint16(b, 0)
	return b
}

// honest builds the archive of parts with their own records.
func honest(parts ...zipPart) []byte {
	return buildZip(parts, func(offsets []int64) []zipRecord { return recordsOf(parts, offsets) }, false)
}

// npyOf is the NPY file of a.
func npyOf(t testing.TB, a *ndarray.Array) []byte {
	var b bytes.Buffer
	require.NoError(t, Write(&b, a))
	return b.Bytes()
}

// sameMember is the attack of issue 19: n directory records, under n names,
// all pointing at the one member of the archive.
func sameMember(t testing.TB, n int) []byte {
	v := make([]float64, 1000)
	a, _ := ndarray.FromSlice(v)
	part := storedPart("a.npy", npyOf(t, a))
	return buildZip([]zipPart{part}, func(offsets []int64) []zipRecord {
		rs := make([]zipRecord, n)
		for i := range rs {
			rs[i] = zipRecord{fmt.Sprintf("a%d.npy", i), zipStore, part.crc, uint64(len(part.data)), part.usize, offsets[0]}
		}
		return rs
	}, false)
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A directory whose 100,000 records all point at one member is refused when
// the archive is opened, at once and in little memory; before, ReadNPZ
// decoded the member once per record until memory ran out, and inspect spun
// for half an hour.
func TestNPZRefusesOverlappingMembers(t *testing.T) {
	in := sameMember(t, 100_000)
	var err error
	start := time.Now()
	alloc := allocated(func() { _, err = ReadOptions{}.ReadNPZ(bytes.NewReader(in), int64(len(in))) })
	took := time.Since(start)
	require.ErrorIs(t, err, ErrOverlap)
	assert.NotErrorIs(t, err, ErrNotNPZ, "ErrOverlap is its own class")
	dirAt := 30 + 5 + 8128
	assert.EqualError(t, err, fmt.Sprintf(`npybridge: overlapping or out-of-range zip members at byte %d: `+
		`member "a0.npy" (local header at byte 0, 8128 compressed bytes, ending at byte 8164 or later) overlaps member "a1.npy", whose local header is at byte 0`, dirAt))
	if !raceDetector { // which slows the walk over the records several times
		assert.Less(t, took, time.Second)
	}
	// The records themselves: about 100 bytes each, held once.
	assert.Less(t, alloc, uint64(len(in))*8, "bytes allocated for a %d-byte archive", len(in))
	t.Logf("100,000 records on one member: refused in %v, %d MB allocated for a %d MB archive", took, alloc>>20, len(in)>>20)

	_, err = OpenNPZ(bytes.NewReader(in), int64(len(in)))
	assert.ErrorIs(t, err, ErrOverlap)
}

// Each way a member can lie outside its place is refused, and says where.
func TestNPZRefusesMembersOutOfPlace(t *testing.T) {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	npy := npyOf(t, a) // 134 bytes
	p1, p2 := storedPart("a.npy", npy), storedPart("b.npy", npy)
	for _, c := range []struct {
		name    string
		in      []byte
		atOpen  bool // refused by OpenNPZ, not by Header
		class   error
		message string
	}{{
		name: "the second member starts inside the first",
		in: buildZip([]zipPart{p1, p2}, func(offsets []int64) []zipRecord {
			rs := recordsOf([]zipPart{p1, p2}, offsets)
			rs[1].offset = 100
			return rs
		}, false),
		atOpen: true, class: ErrOverlap,
		message: `npybridge: overlapping or out-of-range zip members at byte 338: member "a.npy" (local header at byte 0, 134 compressed bytes, ending at byte 169 or later) overlaps member "b.npy", whose local header is at byte 100`,
	}, {
		name: "a member's data runs into the directory",
		in: buildZip([]zipPart{p1}, func(offsets []int64) []zipRecord {
			rs := recordsOf([]zipPart{p1}, offsets)
			rs[0].csize, rs[0].usize = 150, 150
			return rs
		}, false),
		atOpen: true, class: ErrOverlap,
		message: `npybridge: overlapping or out-of-range zip members at byte 169: member "a.npy": its local header at byte 0 and 150 compressed bytes run to byte 185 or later, past the start of the directory at byte 169`,
	}, {
		name: "a member beyond the archive",
		in: buildZip([]zipPart{p1}, func(offsets []int64) []zipRecord {
			rs := recordsOf([]zipPart{p1}, offsets)
			rs[0].offset = 1 << 40
			return rs
		}, true),
		atOpen: true, class: ErrOverlap,
		message: `npybridge: overlapping or out-of-range zip members at byte 169: member "a.npy": its local header at byte 1099511627776 and 134 compressed bytes lie beyond the archive's 346 bytes`,
	}, {
		name: "a local extra field pushes the data into the next member",
		in: func() []byte {
			q := p1
			q.extra = make([]byte, 40)
			return buildZip([]zipPart{q, p2}, func(offsets []int64) []zipRecord {
				rs := recordsOf([]zipPart{q, p2}, offsets)
				rs[1].offset -= 40 // b's record points into a's extra field and data
				return rs
			}, false)
		}(),
		class:   ErrOverlap,
		message: `member "a": npybridge: overlapping or out-of-range zip members at byte 0: its 134 compressed bytes at byte 75 run to byte 209, past byte 169 where the next member or the directory starts`,
	}, {
		name: "the directory names another member than the local header",
		in: buildZip([]zipPart{p1}, func(offsets []int64) []zipRecord {
			rs := recordsOf([]zipPart{p1}, offsets)
			rs[0].name = "b.npy"
			return rs
		}, false),
		class:   ErrNotNPZ,
		message: `member "b": npybridge: corrupt npz member at byte 0: the local header names "a.npy", the directory "b.npy"`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			z, err := OpenNPZ(bytes.NewReader(c.in), int64(len(c.in)))
			if c.atOpen {
				require.ErrorIs(t, err, c.class)
				assert.EqualError(t, err, c.message)
				return
			}
			require.NoError(t, err)
			name := z.Names()[0]
			_, err = z.Header(name)
			require.ErrorIs(t, err, c.class)
			assert.EqualError(t, err, c.message)
			_, err = z.Read(name)
			assert.EqualError(t, err, c.message)
		})
	}
}

// hugeClaim is the 189-byte attack of issue 19: one member whose NPY header
// claims a (4096, 4096, 512) array of <f8 in Fortran order, 64 GiB, and
// holds no data. With statedSize the directory claims the member
// decompresses to that too.
func hugeClaim(method uint16, statedSize bool) []byte {
	npy := AppendHeader(nil, ndarray.DTypeOf[float64](), []int{4096, 4096, 512})
	npy = bytes.Replace(npy, []byte("'fortran_order': False"), []byte("'fortran_order': True "), 1)
	part := storedPart("a.npy", npy)
	if method == zipDeflate {
		part = deflatedPart("a.npy", npy, flate.BestCompression)
	}
	if !statedSize {
		return honest(part)
	}
	part.usize = uint64(len(npy)) + 64<<30
	return buildZip([]zipPart{part}, func(offsets []int64) []zipRecord { return recordsOf([]zipPart{part}, offsets) }, true)
}

// A header that claims more than the member holds fails before any data is
// read, in a few KiB: the member's bytes in the archive bound what it can
// hold, whatever its directory record says.
func TestNPZClaimBeyondTheMember(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      []byte
		message string
	}{{
		"stored", hugeClaim(zipStore, false),
		`member "a": npybridge: truncated input at byte 128: the header announces 68719476736 data bytes (shape (4096, 4096, 512) of <f8), the member holds 0 (its directory record at archive byte 163)`,
	}, {
		"deflated", hugeClaim(zipDeflate, false),
		`member "a": npybridge: truncated input at byte 128: the header announces 68719476736 data bytes (shape (4096, 4096, 512) of <f8), the member holds 0 (its directory record at archive byte 119)`,
	}, {
		"deflated, the directory claiming 64 GiB too", hugeClaim(zipDeflate, true),
		`member "a": npybridge: truncated input at byte 128: the header announces 68719476736 data bytes (shape (4096, 4096, 512) of <f8); 84 deflated bytes decompress to at most 86946`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Logf("%d bytes", len(c.in))
			z, err := OpenNPZ(bytes.NewReader(c.in), int64(len(c.in)))
			require.NoError(t, err)
			alloc := allocated(func() {
				_, err = z.Header("a")
				assert.ErrorIs(t, err, ndarray.ErrTruncated)
				assert.EqualError(t, err, c.message)
				_, _, err = z.Open("a")
				assert.EqualError(t, err, c.message)
				_, err = z.Read("a")
				assert.EqualError(t, err, c.message)
				_, err = ReadOptions{}.ReadNPZ(bytes.NewReader(c.in), int64(len(c.in)))
				assert.EqualError(t, err, c.message)
			})
			assert.Less(t, alloc, uint64(256<<10), "bytes allocated")
		})
	}
}

// A member is read into one allocation of the array's size, filled in
// place, a Fortran-order one transposed as it arrives: before, a deflated
// member grew by doubling (twice its size allocated, 1.5 times at once)
// and a Fortran one was copied again to transpose it.
func TestNPZReadAllocatesTheArrayOnce(t *testing.T) {
	const n = 64 << 20
	for _, fortran := range []bool{false, true} {
		t.Run(fmt.Sprintf("fortran=%v", fortran), func(t *testing.T) {
			npy := AppendHeader(nil, ndarray.DTypeOf[float64](), []int{2048, 4096})
			if fortran {
				npy = bytes.Replace(npy, []byte("'fortran_order': False"), []byte("'fortran_order': True "), 1)
			}
			data := make([]byte, n)
			npy = append(npy, data...)
			in := honest(deflatedPart("big.npy", npy, flate.BestSpeed))
			npy, data = nil, nil
			z, err := OpenNPZ(bytes.NewReader(in), int64(len(in)))
			require.NoError(t, err)
			var a *ndarray.Array
			alloc := allocated(func() { a, err = z.Read("big") })
			require.NoError(t, err)
			assert.Equal(t, []int{2048, 4096}, a.Shape)
			assert.Equal(t, n, len(a.Data))
			// Beyond the array: the inflater's window and, for Fortran
			// order, the 1 MiB chunk the transpose reads into.
			assert.LessOrEqual(t, alloc, uint64(n+2<<20), "bytes allocated to read a %d-byte member", n)
		})
	}
}

// Fortran-order data is transposed as it arrives, across chunk boundaries
// and for every item size, exactly as ndarray.FromColumnMajor does it.
func TestReadArrayTransposesInPlace(t *testing.T) {
	for _, c := range []struct {
		dtype string
		shape []int
	}{
		{"|u1", []int{3, 4, 5}}, {"<i2", []int{7, 3}}, {"<f4", []int{2, 3, 4, 5}}, {">f8", []int{300, 500}},
		{"<c16", []int{5, 2}}, {"|S3", []int{4, 6}}, {"<f8", []int{1, 9}}, {"<f8", []int{9, 1}}, {"|u1", []int{70000, 5}},
		{"<i4", []int{0, 3}},
	} {
		dt := ndarray.MustParseDType(c.dtype)
		size, _ := ndarray.ByteSize(dt, c.shape)
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + i>>8)
		}
		want, err := ndarray.FromColumnMajor(dt, c.shape, data)
		require.NoError(t, err)
		h := &Header{DType: dt, Shape: c.shape, FortranOrder: true}
		got, err := h.ReadArray(bytes.NewReader(data))
		require.NoError(t, err, "%s %v", c.dtype, c.shape)
		assert.True(t, want.Equal(got), "%s %v", c.dtype, c.shape)
		// Through an npz member too, deflated.
		npy := AppendHeader(nil, dt, c.shape)
		npy = bytes.Replace(npy, []byte("'fortran_order': False"), []byte("'fortran_order': True "), 1)
		in := honest(deflatedPart("f.npy", append(npy, data...), flate.DefaultCompression))
		arrays, err := ReadOptions{}.ReadNPZ(bytes.NewReader(in), int64(len(in)))
		require.NoError(t, err)
		assert.True(t, want.Equal(arrays[0].Array), "%s %v through an npz", c.dtype, c.shape)
	}
}

// A member that is cut, corrupt or fails its CRC says which member, what
// was expected and where; never a bare EOF.
func TestNPZMemberErrorsSayWhere(t *testing.T) {
	a, _ := ndarray.FromSlice(make([]float64, 5000))
	npy := npyOf(t, a)
	good := deflatedPart("a.npy", npy, flate.BestCompression)
	cut := good
	cut.data = good.data[:len(good.data)/2]
	corrupt := storedPart("a.npy", npy)
	corrupt.method = zipDeflate
	corrupt.data = bytes.Repeat([]byte{0xff}, 64) // a final block of the reserved type 3
	badCRC := good
	badCRC.crc ^= 1
	short := storedPart("a.npy", npy[:len(npy)-8])
	short.usize = uint64(len(npy))
	long := deflatedPart("a.npy", append(npy[:len(npy):len(npy)], 1, 2, 3, 4, 5, 6, 7, 8), flate.BestCompression)
	long.usize = uint64(len(npy))
	for _, c := range []struct {
		name    string
		in      []byte
		message string
	}{
		{"deflate data cut", honest(cut), `member "a": npybridge: truncated input at byte 106: the deflate data (71 bytes at byte 35) ends after 38 of the 40128 bytes the directory record says it decompresses to`},
		{"not deflate data", honest(corrupt), `member "a": npybridge: corrupt npz member at byte 35: the deflate data is corrupt at its byte 0, after 0 bytes decompressed`},
		{"CRC", honest(badCRC), `member "a": npybridge: corrupt npz member at byte 35: the member's CRC-32 is a356afab, its directory record says a356afaa`},
		{"deflated member longer than stated", honest(long), `member "a": npybridge: corrupt npz member at byte 35: the member decompresses to more than the 40128 bytes its directory record says: that size is wrong, or the data corrupt`},
		{"stored member shorter than stated", honest(short), `member "a": npybridge: corrupt npz member at byte 40155: a stored member of 40120 bytes whose directory record says it holds 40128`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadOptions{}.ReadNPZ(bytes.NewReader(c.in), int64(len(c.in)))
			require.Error(t, err)
			assert.EqualError(t, err, c.message)
			assert.NotErrorIs(t, err, io.EOF)
			assert.NotErrorIs(t, err, io.ErrUnexpectedEOF)
			if !strings.Contains(c.name, "cut") {
				assert.ErrorIs(t, err, ErrNotNPZ)
			}
		})
	}
}

// Every .npz of the external corpus lists and reads as archive/zip with
// ReadHeader and Read sees it: the same names, the same arrays, the same
// class of error.
func TestNPZCorpusAgreesWithArchiveZip(t *testing.T) {
	var files []string
	root := "../../shared/corpus/external"
	sharedfiles.ReadFile(t, filepath.Join(root, "README.md"))
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".npz") {
			files = append(files, p)
		}
		return err
	}))
	require.NotEmpty(t, files)
	checked := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		zr, zerr := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		z, err := OpenNPZ(bytes.NewReader(b), int64(len(b)))
		if zerr != nil {
			assert.Error(t, err, p)
			continue
		}
		require.NoError(t, err, p)
		var names []string
		for _, f := range zr.File {
			name := strings.TrimSuffix(f.Name, ".npy")
			names = append(names, name)
			want, werr := func() (*ndarray.Array, error) {
				if !strings.HasSuffix(f.Name, ".npy") {
					return nil, ndarray.ErrNotArray
				}
				rc, err := f.Open()
				if err != nil {
					return nil, err
				}
				defer rc.Close()
				return Read(rc)
			}()
			got, err := z.Read(name)
			if werr != nil {
				assert.Error(t, err, "%s %s", p, name)
				for _, class := range []error{ndarray.ErrNotArray, ErrUnsupported, ndarray.ErrMalformed} {
					if errors.Is(werr, class) {
						assert.ErrorIs(t, err, class, "%s %s", p, name)
					}
				}
				continue
			}
			require.NoError(t, err, "%s %s", p, name)
			assert.True(t, want.Equal(got), "%s %s", p, name)
			checked++
		}
		assert.Equal(t, names, z.Names(), p)
	}
	t.Logf("%d archives, %d arrays read alike", len(files), checked)
}
