package npybridge

import (
	"archive/zip"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"

	"github.com/ndpack/ndpack/internal/deflate"
	"github.com/ndpack/ndpack/ndarray"
)

// smallMembers compresses the deflated members whose whole .npy fits one
// deflate block on every core, several at once, and writes them in the
// order they were added, as raw members of known CRC and sizes: an archive
// of thousands of small arrays is compressed as fast as one large one. A
// member goes to the compressors as soon as it is added, and is written
// once it and those before it are done, by the calls that add members
// after it (or by Close); at most 2 x cores are in flight. Each member's
// compressed bytes are a function of its bytes and the level alone, and
// the order is the order added, so the archive is the same bytes whatever
// the number of cores.
type smallMembers struct {
	queue []*smallJob // in flight, in the order added
	work  chan *smallJob
	free  [][]byte // the buffers of members written, to reuse
}

// buffer is a buffer of n bytes, one of those reused if it is large
// enough: an archive of thousands of members then makes little garbage,
// whose collection would take time from the compressors.
func (s *smallMembers) buffer(n int) []byte {
	if k := len(s.free); k > 0 {
		b := s.free[k-1]
		s.free = s.free[:k-1]
		if cap(b) >= n {
			return b[:n]
		}
	}
	return make([]byte, n)
}

// smallJob is one small member: its .npy file, compressed by a worker.
type smallJob struct {
	name  string
	level int
	npy   []byte
	out   []byte
	crc   uint32
	done  chan struct{}
}

// isSmall reports whether a member of dt and shape is one smallMembers
// compresses: deflated, and its .npy (header and data) one block or less.
func (z *NPZWriter) isSmall(dt ndarray.DType, shape []int) bool {
	if z.method != zip.Deflate {
		return false
	}
	n, err := ndarray.ByteSize(dt, shape)
	return err == nil && n <= deflateBlock && int64(n)+int64(len(AppendHeader(nil, dt, shape))) <= deflateBlock
}

// addSmall reads the member's data from r and hands the member to the
// compressors, then writes the members before it that are done.
func (z *NPZWriter) addSmall(name string, dt ndarray.DType, shape []int, r io.Reader) error {
	if err := z.claim(name); err != nil {
		return err
	}
	n, _ := ndarray.ByteSize(dt, shape)
	header := AppendHeader(nil, dt, shape)
	s := &z.small
	npy := s.buffer(len(header) + n)
	copy(npy, header)
	if got, err := io.ReadFull(r, npy[len(header):]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = errAt(ndarray.ErrTruncated, -1, "the data source ended after %d of %d bytes", got, n)
		}
		return memberError(name, err)
	}
	if s.work == nil {
		cores := runtime.GOMAXPROCS(0)
		s.work = make(chan *smallJob, 2*cores)
		for range cores {
			go compressSmall(s.work)
		}
	}
	// The output, never grown: stored blocks are the most it takes.
	out := s.buffer(len(npy) + len(npy)/64 + 64)[:0]
	j := &smallJob{name: name, level: z.level(), npy: npy, out: out, done: make(chan struct{})}
	s.queue = append(s.queue, j)
	s.work <- j
	// Write what is done, and wait for the oldest once enough are in
	// flight to keep every core busy.
	for len(s.queue) > 0 {
		select {
		case <-s.queue[0].done:
		default:
			if len(s.queue) < cap(s.work) {
				return nil
			}
			<-s.queue[0].done
		}
		if err := s.writeHead(z); err != nil {
			return err
		}
	}
	return nil
}

// compressSmall is a compressor of small members, one per core, with an
// encoder of its own kept from member to member.
func compressSmall(work <-chan *smallJob) {
	var enc *deflate.Encoder
	for j := range work {
		if enc == nil || enc.Level() != j.level {
			enc, _ = deflate.NewEncoder(j.level) // the level was checked by the NPZWriter
		}
		j.out = enc.Append(j.out, j.npy, 0, true)
		j.crc = crc32.ChecksumIEEE(j.npy)
		close(j.done)
	}
}

// writeHead writes the oldest member in flight, once it is compressed, as
// a raw member.
func (s *smallMembers) writeHead(z *NPZWriter) error {
	j := s.queue[0]
	<-j.done
	s.queue[0] = nil
	s.queue = s.queue[1:]
	fh := &zip.FileHeader{Name: j.name + ".npy", Method: zip.Deflate, CRC32: j.crc,
		CompressedSize64: uint64(len(j.out)), UncompressedSize64: uint64(len(j.npy)),
		ModifiedDate: npzDOSDate, Extra: npzTimeExtra}
	w, err := z.zw.CreateRaw(fh)
	if err != nil {
		return memberError(j.name, err)
	}
	z.last = nil // a raw member has no data descriptor to come
	if _, err := w.Write(j.out); err != nil {
		return memberError(j.name, err)
	}
	if len(s.free) < 4*cap(s.work) {
		s.free = append(s.free, j.npy, j.out)
	}
	return nil
}

// drain writes every member in flight, in order, and stops the
// compressors.
func (s *smallMembers) drain(z *NPZWriter) error {
	for len(s.queue) > 0 {
		if err := s.writeHead(z); err != nil {
			for _, j := range s.queue {
				<-j.done // the compressors are done with them
			}
			s.queue = nil
			s.stop()
			return err
		}
	}
	s.stop()
	return nil
}

// stop ends the compressors; the next small member starts them again.
func (s *smallMembers) stop() {
	if s.work != nil {
		close(s.work)
		s.work = nil
	}
	s.free = nil
}

// npzDOSDate and npzTimeExtra are npzTime as the zip headers of a raw
// member carry it, as archive/zip writes them for the others: the MS-DOS
// date (1980-01-01, time 0) and Info-ZIP's extended timestamp.
var (
	npzDOSDate   = uint16((npzTime.Year()-1980)<<9 | int(npzTime.Month())<<5 | npzTime.Day())
	npzTimeExtra = binary.LittleEndian.AppendUint32([]byte{0x55, 0x54, 5, 0, 1}, uint32(npzTime.Unix()))
)
