package npybridge

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/inflate"
	"github.com/ndpack/ndpack/ndarray"
)

// The zip reading here replaces archive/zip's for .npz archives, because an
// archive is outside input and archive/zip trusts its layout: a directory
// whose 100,000 entries all point at one member is read as 100,000
// members, each decompressing the same bytes again. This reader reads the
// directory once, checks that the members' bytes lie in the archive without
// overlapping each other or the directory before any is read, and bounds
// what each member can decompress to by the bytes it occupies.

const (
	zipLocalHeaderLen = 30
	zipCentralLen     = 46
	zipEndLen         = 22
	zipEnd64Len       = 56
	zipEnd64LocLen    = 20
	zipMaxComment     = 65535

	zipLocalSig    = 0x04034b50
	zipCentralSig  = 0x02014b50
	zipEndSig      = 0x06054b50
	zipEnd64Sig    = 0x06064b50
	zipEnd64LocSig = 0x07064b50

	zipStore   = 0
	zipDeflate = 8

	// maxInflateRatio is the most bytes deflate can produce from one
	// compressed byte: a match of 258 bytes (length code 285, no extra
	// bits) at distance 1 costs at least 2 bits, one for the length code
	// and one for the distance code. No member can decompress to more
	// than this times its compressed size (plus one match).
	maxInflateRatio = 1032
)

// zipEntry is one member of an archive as its central directory record
// describes it, after the checks of readZipDir.
type zipEntry struct {
	name   string
	method uint16
	flags  uint16
	crc    uint32
	csize  uint64 // compressed bytes
	usize  uint64 // bytes once decompressed
	local  int64  // archive offset of the local header
	limit  int64  // where the next member or the directory starts: the member must end by then
	record int64  // archive offset of the central directory record, for errors
}

// zipDir is the directory of an archive.
type zipDir struct {
	entries  []zipEntry
	dirStart int64 // where the central directory starts in the archive
}

// u16 and friends read little-endian fields.
func u16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func u32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func u64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func notZip(off int64, format string, args ...any) error {
	return errAt(ErrNotNPZ, off, format, args...)
}

// readAtFull reads len(b) bytes at off, turning a short read into an error
// that says what was being read and where.
func readAtFull(r io.ReaderAt, b []byte, off int64, what string) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errAt(ndarray.ErrTruncated, off, "%s needs %d bytes, the input has %d there", what, len(b), n)
	}
	return fmt.Errorf("reading %s at byte %d: %w", what, off, err)
}

// readZipDir reads the directory of the archive of size bytes in r and
// checks the layout of its members: each member's local header and data
// must lie before the directory and not overlap another's. It reads the
// directory in one pass and no member's bytes; its memory is that of the
// entries.
func readZipDir(r io.ReaderAt, size int64) (*zipDir, error) {
	tr := &tailReader{r: r}
	end, err := findZipEnd(tr, size)
	if err != nil {
		return nil, err
	}
	d := &zipDir{dirStart: end.dirStart}
	// The directory is read in one pass: from the tail already read when
	// it lies there (an archive of up to about 700 members), else in one
	// stream when r can give one (a remote object), else through a
	// buffer.
	dirSrc, closeDir := rangeReader(tr, end.dirStart, int64(end.dirSize))
	defer closeDir()
	br := bufio.NewReaderSize(dirSrc, int(min(end.dirSize, 64<<10)))
	var fixed [zipCentralLen]byte
	at := end.dirStart
	stop := end.dirStart + int64(end.dirSize)
	var name, extra []byte // at most 64 KiB each, within the directory's bytes
	// Entries are appended as their records are read: the count and size
	// the end record claims size nothing (a zip64 record may claim a
	// directory of a terabyte that the archive, or a server, never sends).
	d.entries = make([]zipEntry, 0, min(end.count, end.dirSize/zipCentralLen, 1024))
	for at < stop {
		if stop-at < zipCentralLen {
			break // trailing bytes shorter than a record: the count check decides
		}
		if _, err := io.ReadFull(br, fixed[:]); err != nil {
			return nil, readErr(err, at, "a central directory record")
		}
		if u32(fixed[:]) != zipCentralSig {
			break // as archive/zip: the records end here; the count check decides
		}
		e := zipEntry{
			flags:  u16(fixed[8:]),
			method: u16(fixed[10:]),
			crc:    u32(fixed[16:]),
			csize:  uint64(u32(fixed[20:])),
			usize:  uint64(u32(fixed[24:])),
			record: at,
		}
		nameLen, extraLen, commentLen := int64(u16(fixed[28:])), int64(u16(fixed[30:])), int64(u16(fixed[32:]))
		offset := uint64(u32(fixed[42:]))
		if at+zipCentralLen+nameLen+extraLen+commentLen > stop {
			return nil, notZip(at, "the directory record of member %d runs %d bytes past the directory's end at byte %d",
				len(d.entries), at+zipCentralLen+nameLen+extraLen+commentLen-stop, stop)
		}
		name = slices.Grow(name[:0], int(nameLen))[:nameLen]
		if _, err := io.ReadFull(br, name); err != nil {
			return nil, readErr(err, at+zipCentralLen, "a member name")
		}
		e.name = string(name)
		extra = slices.Grow(extra[:0], int(extraLen))[:extraLen]
		if _, err := io.ReadFull(br, extra); err != nil {
			return nil, readErr(err, at+zipCentralLen+nameLen, "the extra fields of member "+quote(e.name))
		}
		if err := e.zip64Sizes(extra, &offset, at+zipCentralLen+nameLen); err != nil {
			return nil, err
		}
		if _, err := br.Discard(int(commentLen)); err != nil {
			return nil, readErr(err, at+zipCentralLen+nameLen+extraLen, "the comment of member "+quote(e.name))
		}
		if offset > uint64(size) || e.csize > uint64(size) {
			return nil, errAt(ErrOverlap, at, "member %q: its local header at byte %d and %d compressed bytes lie beyond the archive's %d bytes",
				e.name, offset, e.csize, size)
		}
		e.local = end.base + int64(offset)
		d.entries = append(d.entries, e)
		at += zipCentralLen + nameLen + extraLen + commentLen
	}
	// As archive/zip, only the low 16 bits: writers that do not write
	// zip64 records wrap the count of an archive of 65,536 members or more.
	if n := uint64(len(d.entries)); uint16(n) != uint16(end.count) {
		return nil, notZip(end.at, "the directory's end record counts %s, the directory at byte %d holds %s",
			codecerr.Count(end.count, "member"), end.dirStart, codecerr.Count(len(d.entries), "record"))
	}
	if err := d.checkLayout(); err != nil {
		return nil, err
	}
	return d, nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// readErr describes a failure to read a part of the directory.
func readErr(err error, at int64, what string) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errAt(ndarray.ErrTruncated, at, "the archive ends inside %s", what)
	}
	return fmt.Errorf("reading %s at archive byte %d: %w", what, at, err)
}

// zip64Sizes reads the zip64 extra field (ID 1) of a directory record:
// each size or offset saturated at 0xffffffff is there as 8 bytes, in a
// fixed order.
func (e *zipEntry) zip64Sizes(extra []byte, offset *uint64, at int64) error {
	need := func(v uint64) bool { return v == 0xffffffff }
	if !need(e.usize) && !need(e.csize) && !need(*offset) {
		return nil
	}
	for len(extra) >= 4 {
		id, n := u16(extra), int(u16(extra[2:]))
		extra = extra[4:]
		if n > len(extra) {
			break
		}
		field := extra[:n]
		extra = extra[n:]
		if id != 1 {
			continue
		}
		for _, v := range []*uint64{&e.usize, &e.csize, offset} {
			if !need(*v) {
				continue
			}
			if len(field) < 8 {
				return notZip(at, "member %q: its zip64 extra field is too short for the sizes its record leaves to it", e.name)
			}
			*v = u64(field)
			field = field[8:]
		}
		return nil
	}
	return notZip(at, "member %q: its record gives a size or offset of 0xffffffff and no zip64 extra field", e.name)
}

// zipEnd is what the end of central directory record says.
type zipEnd struct {
	at       int64  // offset of the record the directory ends at (zip64 or not)
	count    uint64 // members
	dirSize  uint64
	dirStart int64 // where the directory is
	base     int64 // bytes before the archive proper (a self-extractor's stub)
	zip64    bool
}

// findZipEnd finds the end of central directory record in the last 64 KiB
// of the archive (its comment can be that long), and the zip64 one if the
// record defers to it.
func findZipEnd(r io.ReaderAt, size int64) (*zipEnd, error) {
	if size < zipEndLen {
		return nil, notZip(-1, "%d bytes is shorter than a zip end record (%d)", size, zipEndLen)
	}
	tailLen := min(size, zipEndLen+zipMaxComment)
	tail := make([]byte, tailLen)
	if err := readAtFull(r, tail, size-tailLen, "the archive's last bytes"); err != nil {
		return nil, err
	}
	if tr, ok := r.(*tailReader); ok {
		tr.tail, tr.at = tail, size-tailLen
	}
	i := bytes.LastIndex(tail[:len(tail)-zipEndLen+4], []byte("PK\x05\x06"))
	if i < 0 {
		return nil, notZip(-1, "no zip end of central directory record (PK\\x05\\x06) in the last %d bytes", tailLen)
	}
	rec := tail[i:]
	e := &zipEnd{at: size - tailLen + int64(i)}
	e.count = uint64(u16(rec[10:]))
	e.dirSize = uint64(u32(rec[12:]))
	dirOffset := uint64(u32(rec[16:]))
	if e.count == 0xffff || e.dirSize == 0xffffffff || dirOffset == 0xffffffff {
		if err := e.readZip64(r, &dirOffset); err != nil {
			return nil, err
		}
	}
	if e.dirSize > uint64(e.at) || dirOffset > uint64(e.at) {
		return nil, notZip(e.at, "the directory of %d bytes at byte %d does not fit before its end record at byte %d", e.dirSize, dirOffset, e.at)
	}
	e.base = e.at - int64(e.dirSize) - int64(dirOffset)
	if e.base < 0 {
		return nil, notZip(e.at, "the directory of %d bytes at byte %d runs past its end record at byte %d", e.dirSize, dirOffset, e.at)
	}
	if e.base > 0 {
		// As archive/zip: some writers' offsets are right although the
		// directory does not end at the end record; trust them when a
		// directory record is where they point.
		var sig [4]byte
		if _, err := r.ReadAt(sig[:], int64(dirOffset)); err == nil && u32(sig[:]) == zipCentralSig {
			e.base = 0
		}
	}
	e.dirStart = e.base + int64(dirOffset)
	return e, nil
}

// readZip64 reads the zip64 end record through its locator, just before
// the end record.
func (e *zipEnd) readZip64(r io.ReaderAt, dirOffset *uint64) error {
	locAt := e.at - zipEnd64LocLen
	if locAt < 0 {
		return nil // no room for a locator: the saturated values are real
	}
	var loc [zipEnd64LocLen]byte
	if err := readAtFull(r, loc[:], locAt, "the zip64 end record locator"); err != nil {
		return err
	}
	if u32(loc[:]) != zipEnd64LocSig {
		return nil
	}
	recAt := locAt - zipEnd64Len // where the record is when nothing precedes the archive
	if stated := u64(loc[8:]); stated <= uint64(locAt-zipEnd64Len) {
		var sig [4]byte
		if _, err := r.ReadAt(sig[:], int64(stated)); err == nil && u32(sig[:]) == zipEnd64Sig {
			recAt = int64(stated)
		}
	}
	if recAt < 0 {
		return notZip(locAt, "the zip64 end record locator points before the archive")
	}
	var rec [zipEnd64Len]byte
	if err := readAtFull(r, rec[:], recAt, "the zip64 end record"); err != nil {
		return err
	}
	if u32(rec[:]) != zipEnd64Sig {
		return notZip(recAt, "no zip64 end record (PK\\x06\\x06) where its locator points")
	}
	e.at = recAt
	e.zip64 = true
	e.count = u64(rec[32:])
	e.dirSize = u64(rec[40:])
	*dirOffset = u64(rec[48:])
	return nil
}

// checkLayout checks that the members' bytes, as far as the directory tells
// them (local header, name, compressed data; the local extra field is
// checked when the member is opened), lie before the directory and do not
// overlap, and sets each member's limit. It sorts an index, not the
// entries, which stay in archive order.
func (d *zipDir) checkLayout() error {
	order := make([]int32, len(d.entries))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return int(max(-1, min(1, d.entries[a].local-d.entries[b].local)))
	})
	for k, i := range order {
		e := &d.entries[i]
		e.limit = d.dirStart
		if k+1 < len(order) {
			e.limit = d.entries[order[k+1]].local
		}
		end := uint64(e.local) + zipLocalHeaderLen + uint64(len(e.name)) + e.csize
		switch {
		case k+1 < len(order) && end > uint64(e.limit):
			next := &d.entries[order[k+1]]
			return errAt(ErrOverlap, e.record, "member %q (local header at byte %d, %d compressed bytes, ending at byte %d or later) overlaps member %q, whose local header is at byte %d",
				e.name, e.local, e.csize, end, next.name, next.local)
		case end > uint64(d.dirStart):
			return errAt(ErrOverlap, e.record, "member %q: its local header at byte %d and %d compressed bytes run to byte %d or later, past the start of the directory at byte %d",
				e.name, e.local, e.csize, end, d.dirStart)
		}
	}
	return nil
}

// maxBytes is the most the member can decompress to: its stated size,
// which the reader enforces, and no more than deflate can make of its
// compressed bytes.
func (e *zipEntry) maxBytes() uint64 {
	if e.method == zipDeflate {
		if e.csize > (1<<63)/maxInflateRatio {
			return e.usize
		}
		return min(e.usize, e.csize*maxInflateRatio+258)
	}
	return min(e.usize, e.csize)
}

// zipMember reads one member's bytes, decompressed, checking their count
// against the directory and, at the end, their CRC.
type zipMember struct {
	e      *zipEntry
	src    io.Reader       // the decompressed bytes
	inf    *inflate.Reader // for a deflated member, returned to pool on Close
	pool   *sync.Pool
	crc    hash.Hash32
	n      uint64 // bytes delivered
	err    error  // sticky
	dataAt int64  // archive offset of the compressed data

	closeSrc func() // ends the stream the data is read from
}

// openZipMember opens e for reading: it reads and checks the local header.
// With whole, the member is to be read to its end: from an r that streams
// (a remote object), its local header and its data then come in one
// request, the local header's length checked as it arrives; otherwise the
// local header and the start of the data (an NPY header, for a stored
// member) come in one read of at most memberPrefix bytes, one request for
// a remote archive, and the rest of the data after them.
func openZipMember(r io.ReaderAt, e *zipEntry, inflaters *sync.Pool, whole bool) (*zipMember, error) {
	if e.flags&1 != 0 {
		return nil, errAt(ErrNotNPZ, e.local, "the member is encrypted")
	}
	if e.method != zipStore && e.method != zipDeflate {
		return nil, errAt(ErrNotNPZ, e.record, "compression method %d; np.savez stores (0) and np.savez_compressed deflates (8)", e.method)
	}
	if e.method == zipStore && e.csize != e.usize {
		return nil, errAt(errCorruptMember, e.record, "a stored member of %d bytes whose directory record says it holds %d", e.csize, e.usize)
	}
	if whole && streams(r) {
		return openZipMemberStream(r, e, inflaters)
	}
	// The prefix ends where the next member starts.
	pre := make([]byte, max(zipLocalHeaderLen+int64(len(e.name)), min(memberPrefix, e.limit-e.local)))
	if err := readAtFull(r, pre, e.local, "the local header"); err != nil {
		return nil, err
	}
	dataAt, err := e.checkLocal(pre[:zipLocalHeaderLen+len(e.name)])
	if err != nil {
		return nil, err
	}
	// The data: what the prefix holds of it, then the rest from r.
	inPre := min(max(0, e.local+int64(len(pre))-dataAt), int64(e.csize))
	var sec io.Reader
	var closeRest func()
	if inPre > 0 {
		rest, c := rangeReader(r, dataAt+inPre, int64(e.csize)-inPre)
		sec, closeRest = io.MultiReader(bytes.NewReader(pre[dataAt-e.local:dataAt-e.local+inPre]), rest), c
	} else {
		sec, closeRest = rangeReader(r, dataAt, int64(e.csize))
	}
	return newZipMember(e, sec, dataAt, closeRest, inflaters), nil
}

// openZipMemberStream opens e as openZipMember does, reading its local
// header and data in one stream: from the local header to the data's end
// as far as the directory tells it (the local extra field, up to 64 KiB,
// may be longer than the central one), or to where the next member starts.
func openZipMemberStream(r io.ReaderAt, e *zipEntry, inflaters *sync.Pool) (*zipMember, error) {
	span := min(e.limit-e.local, zipLocalHeaderLen+int64(len(e.name))+0xffff+int64(e.csize))
	src, done := rangeReader(r, e.local, span)
	lh := make([]byte, zipLocalHeaderLen+len(e.name))
	if _, err := io.ReadFull(src, lh); err != nil {
		done()
		return nil, readErr(err, e.local, "the local header")
	}
	dataAt, err := e.checkLocal(lh)
	if err == nil {
		_, err = io.CopyN(io.Discard, src, dataAt-e.local-int64(len(lh)))
		if err != nil {
			err = readErr(err, e.local+int64(len(lh)), "the local header's extra field")
		}
	}
	if err != nil {
		done()
		return nil, err
	}
	return newZipMember(e, io.LimitReader(src, int64(e.csize)), dataAt, done, inflaters), nil
}

// streams reports whether r reads a range in one stream (a remote object).
func streams(r io.ReaderAt) bool {
	if t, ok := r.(*tailReader); ok {
		r = t.r
	}
	_, ok := r.(streamer)
	return ok
}

// checkLocal checks a member's local header, lh (its fixed part and
// name): its signature, the name the directory gives, and that its data
// ends before the next member or the directory. It returns where the data
// starts.
func (e *zipEntry) checkLocal(lh []byte) (int64, error) {
	if u32(lh) != zipLocalSig {
		return 0, errAt(errCorruptMember, e.local, "no local header (PK\\x03\\x04) where the directory points, but % x", lh[:4])
	}
	nameLen, extraLen := int64(u16(lh[26:])), int64(u16(lh[28:]))
	if name := lh[zipLocalHeaderLen:]; nameLen != int64(len(e.name)) || string(name) != e.name {
		// zipfile, and so np.load, refuses this too.
		return 0, errAt(errCorruptMember, e.local, "the local header names %q, the directory %q", name[:min(int64(len(name)), nameLen)], e.name)
	}
	dataAt := e.local + zipLocalHeaderLen + nameLen + extraLen
	if end := uint64(dataAt) + e.csize; end > uint64(e.limit) {
		return 0, errAt(ErrOverlap, e.local, "its %d compressed bytes at byte %d run to byte %d, past byte %d where the next member or the directory starts",
			e.csize, dataAt, end, e.limit)
	}
	return dataAt, nil
}

// newZipMember reads e's data from sec, which starts at archive byte
// dataAt; closeSrc ends sec.
func newZipMember(e *zipEntry, sec io.Reader, dataAt int64, closeSrc func(), inflaters *sync.Pool) *zipMember {
	m := &zipMember{e: e, src: sec, dataAt: dataAt, crc: crc32.NewIEEE(), closeSrc: closeSrc}
	if e.method == zipDeflate {
		// A decompressor's window and buffers grow to 350 KiB: an archive
		// of many members reuses them rather than allocating them per
		// member.
		inf, _ := inflaters.Get().(*inflate.Reader)
		if inf == nil {
			inf = inflate.NewReader(sec)
		} else {
			inf.Reset(sec)
		}
		m.inf, m.pool, m.src = inf, inflaters, inf
	}
	return m
}

// Read reads decompressed bytes. It fails if the member holds more bytes
// than the directory says, or fewer, or their CRC differs. The read that
// would deliver the last byte checks that the data ends there and its CRC
// first, and delivers nothing if it does not: io.ReadFull drops an error
// that comes with the bytes it asked for.
func (m *zipMember) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	left := m.e.usize - m.n
	if left == 0 {
		m.err = m.end(nil)
		return 0, m.err
	}
	if uint64(len(p)) > left {
		p = p[:left]
	}
	n, err := m.src.Read(p)
	m.crc.Write(p[:n])
	m.n += uint64(n)
	switch {
	case m.n == m.e.usize && (err == nil || err == io.EOF):
		if m.err = m.end(err); m.err != io.EOF {
			return 0, m.err
		}
		return n, nil
	case err == nil:
		return n, nil
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		m.err = m.short()
	default:
		if ce := m.corrupt(err); ce != nil {
			m.err = ce
		} else {
			m.err = fmt.Errorf("reading the member's data at archive byte %d: %w", m.dataAt, err)
		}
	}
	return n, m.err
}

// end checks, once every byte the directory states has been read, that the
// data ends there (err is what the last read said) and that its CRC is the
// directory's. It returns io.EOF if all is well.
func (m *zipMember) end(err error) error {
	if err == nil {
		var one [1]byte
		var k int
		for try := 0; k == 0 && err == nil; try++ {
			if try == 100 {
				return errAt(errCorruptMember, m.dataAt, "the member's data neither ends nor goes on after its %d bytes", m.n)
			}
			k, err = m.src.Read(one[:])
		}
		if k > 0 {
			return errAt(errCorruptMember, m.dataAt, "the member decompresses to more than the %d bytes its directory record says: that size is wrong, or the data corrupt", m.e.usize)
		}
	}
	if err != io.EOF {
		if ce := m.corrupt(err); ce != nil {
			return ce
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errAt(ndarray.ErrTruncated, m.dataAt+int64(m.e.csize), "the deflate data (%d bytes at byte %d) ends before its end mark, after the %d bytes the directory record says it decompresses to",
				m.e.csize, m.dataAt, m.n)
		}
		return fmt.Errorf("reading the member's data at archive byte %d: %w", m.dataAt, err)
	}
	if m.e.crc != 0 && m.crc.Sum32() != m.e.crc {
		return errAt(errCorruptMember, m.dataAt, "the member's CRC-32 is %08x, its directory record says %08x", m.crc.Sum32(), m.e.crc)
	}
	return io.EOF
}

// corrupt describes err at the archive byte where the decompressor found
// the data corrupt; it returns nil if err is not that.
func (m *zipMember) corrupt(err error) error {
	var ce inflate.CorruptError
	if !errors.As(err, &ce) {
		return nil
	}
	return errAt(errCorruptMember, m.dataAt+int64(ce), "the deflate data is corrupt at its byte %d, after %d bytes decompressed", int64(ce), m.n)
}

// short describes a member whose bytes end before the directory's count.
func (m *zipMember) short() error {
	at := m.dataAt + int64(m.e.csize)
	if m.e.method == zipDeflate {
		return errAt(ndarray.ErrTruncated, at, "the deflate data (%d bytes at byte %d) ends after %d of the %d bytes the directory record says it decompresses to",
			m.e.csize, m.dataAt, m.n, m.e.usize)
	}
	return errAt(ndarray.ErrTruncated, at, "the stored data (at byte %d) ends after %d of its %d bytes", m.dataAt, m.n, m.e.usize)
}

// Close returns the decompressor for the next member.
func (m *zipMember) Close() error {
	if m.closeSrc != nil {
		m.closeSrc()
		m.closeSrc = nil
	}
	if m.inf != nil {
		m.inf.Reset(nil)
		m.pool.Put(m.inf)
		m.inf, m.pool, m.src = nil, nil, nil
	}
	if m.err == nil {
		m.err = errors.New("npybridge: read after Close")
	}
	return nil
}

// memberPrefix is how much of a member is read with its local header: the
// header (30 bytes, the name, numpy's zip64 extra field) and, for a stored
// member, its NPY header (64 bytes to a few KiB).
const memberPrefix = 4 << 10

// tailReader is an archive whose last bytes (the tail findZipEnd read) are
// kept, so that the zip64 records and a directory that lie in them are not
// read again.
type tailReader struct {
	r    io.ReaderAt
	tail []byte
	at   int64 // where tail starts
}

func (t *tailReader) ReadAt(p []byte, off int64) (int, error) {
	if t.tail != nil && off >= t.at && off+int64(len(p)) <= t.at+int64(len(t.tail)) {
		return copy(p, t.tail[off-t.at:]), nil
	}
	return t.r.ReadAt(p, off)
}

// streamer is an io.ReaderAt that can also read a range in one stream:
// remote.Object fetches each ReadAt by one request, and a range read
// through its Stream by one request in all.
type streamer interface {
	Stream(off, n int64) io.ReadCloser
}

// rangeReader reads the n bytes at off of r: from the tail r keeps when
// they lie there, in one stream when r can give one, else by ReadAt calls.
// Call the returned function when done.
func rangeReader(r io.ReaderAt, off, n int64) (io.Reader, func()) {
	if t, ok := r.(*tailReader); ok {
		if t.tail != nil && off >= t.at && off+n <= t.at+int64(len(t.tail)) {
			return bytes.NewReader(t.tail[off-t.at : off-t.at+n]), func() {}
		}
		r = t.r
	}
	if s, ok := r.(streamer); ok {
		rc := s.Stream(off, n)
		return rc, func() { rc.Close() }
	}
	return io.NewSectionReader(r, off, n), func() {}
}
