package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/remote"
)

// remoteFlags are --concurrency and --part-size, on every command that
// reads or writes remote objects.
type remoteFlags struct {
	concurrency int
	partSize    byteSize
}

// remoteHelp is their help text, for the commands' usage.
const remoteHelp = `  --concurrency N      parts of a remote object read or uploaded at once,
                       each on a connection of its own (default 8)
  --part-size SIZE     the size of those parts (default 8M; an s3://
                       upload's are 5M to 5G)
`

// addRemoteFlags adds --concurrency and --part-size to fs.
func addRemoteFlags(fs *flag.FlagSet) *remoteFlags {
	r := &remoteFlags{}
	fs.IntVar(&r.concurrency, "concurrency", 0, "")
	fs.Var(&r.partSize, "part-size", "")
	return r
}

// check refuses values the stores would not take.
func (r *remoteFlags) check() error {
	switch {
	case r.concurrency < 0 || r.concurrency > 256:
		return usageError("--concurrency %d: want 1 to 256 connections", r.concurrency)
	case r.partSize != 0 && r.partSize < 64<<10:
		return usageError("--part-size %d: want 64K or more", r.partSize)
	case r.partSize > 5<<30:
		return usageError("--part-size %d: S3 takes parts of at most 5G", r.partSize)
	}
	return nil
}

// remoteOptions are how the commands reach remote objects: net/http with
// a bound on the wait for an answer (a body may take as long as it takes),
// parts of f.partSize bytes f.concurrency at a time, and what they should
// know (a server that ignores Range) said on stderr.
func remoteOptions(f remoteFlags, stderr io.Writer) remote.Options {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	if stderr == nil {
		stderr = os.Stderr
	}
	// Enough idle connections kept for every part read at once.
	t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, f.concurrency, 8)
	return remote.Options{HTTPClient: &http.Client{Transport: t}, PartSize: int64(f.partSize), Concurrency: f.concurrency,
		ErrorLog: log.New(stderr, "ndpack: ", 0)}
}

// urlFormat is the format a URL's path names by its extension.
func urlFormat(name string) format {
	u, err := url.Parse(name)
	if err != nil {
		return ""
	}
	return formatOf(path.Base(u.Path))
}

// openRemote opens the object name and describes its arrays. Only .npy and
// .npz are read remotely: a msgpack file is read through a mapping.
func openRemote(name string, f format, o inputOptions) (*fileArrays, *remote.Object, error) {
	obj, err := remoteOptions(o.remote, o.stderr).Open(context.Background(), name)
	if err != nil {
		return nil, nil, err
	}
	if f == "" {
		var magic [6]byte
		if _, err := obj.ReadAt(magic[:], 0); err != nil && err != io.EOF {
			obj.Close()
			return nil, nil, err
		}
		switch {
		case string(magic[:]) == npybridge.Magic:
			f = formatNPY
		case bytes.HasPrefix(magic[:], []byte("PK")):
			f = formatNPZ
		default:
			f = formatMsgpack
		}
	}
	fa := &fileArrays{format: f, size: obj.Size(), close: func() { obj.Close() }, objects: o.objects, maxObjects: o.maxObjects, maxHeader: o.maxHeader, maxSize: o.arrayBound(), values: o.values}
	switch f {
	case formatNPY:
		err = fa.npyRemote(obj)
	case formatNPZ:
		err = fa.npzFile(obj, obj.Size())
		if err == nil {
			// Each member's header is read once, whoever asks.
			member, seen := fa.member, make(map[int]arraySource)
			fa.member = func(i int) arraySource {
				if s, ok := seen[i]; ok {
					return s
				}
				s := member(i)
				seen[i] = s
				return s
			}
		}
	default:
		err = fa.msgpackRemote(obj)
	}
	if err != nil {
		fa.close()
		return nil, nil, err
	}
	return fa, obj, nil
}

// msgpackRemote describes the arrays of a remote msgpack document: it is
// read whole into memory (its framing is anywhere in it), in parts at
// once as any large read, within --max-size as an array read whole is,
// into memory that grows as it arrives (its size is the server's claim).
func (fa *fileArrays) msgpackRemote(obj *remote.Object) error {
	if obj.Size() > fa.maxSize {
		return fmt.Errorf("the message is %s, more than the %s --max-size lets a command read into memory (by default half the memory the process may use); raise it", bytesText(obj.Size()), bytesText(fa.maxSize))
	}
	rc := obj.Stream(0, obj.Size())
	defer rc.Close()
	b, err := boundedio.ReadFull(rc, int(obj.Size()))
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &ndarray.Error{Pkg: "remote", Err: ndarray.ErrTruncated, Offset: int64(len(b)),
				Detail: fmt.Sprintf("%s: the object ended after %d of its %d bytes", obj.Name(), len(b), obj.Size())}
		}
		return err
	}
	return fa.msgpackArrays(b, func(off, n int64) io.ReadCloser {
		return nopCloser{bytes.NewReader(b[off : off+n])}
	}, func(fn func() error) error { return fn() })
}

// npyRemote describes the array of a remote .npy: one read of 4 KiB for
// the header (more for a longer one), the data in one stream when read.
func (fa *fileArrays) npyRemote(obj *remote.Object) error {
	h, err := fa.readOptions().ReadHeader(bufio.NewReaderSize(io.NewSectionReader(obj, 0, obj.Size()), 4<<10))
	if err != nil {
		return err
	}
	if err := fa.checkNPY(h, "object"); err != nil {
		return err
	}
	// The data streams; its size is the server's claim, so the memory
	// it is read into grows as it arrives.
	src := headerSource("", h, func() (io.ReadCloser, error) {
		return obj.Stream(h.DataOffset, h.DataLen()), nil
	})
	src.rows = func(start, stop int) (*ndarray.Array, error) {
		return fa.readOptions().ReadRowsAt(obj, obj.Size(), start, stop)
	}
	fa.arrays = []arraySource{src}
	return nil
}

// rowRange is --rows START:STOP.
type rowRange struct {
	start, stop int
	text        string
}

// parseRows parses START:STOP as a Python slice without a step: either
// bound may be left out, and negative ones count from the end.
func parseRows(s string) (*rowRange, error) {
	if s == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return nil, usageError("--rows %q: want START:STOP (either may be left out, as in Python)", s)
	}
	if strings.Contains(b, ":") {
		return nil, usageError("--rows %q: a step is not supported; want START:STOP", s)
	}
	r := &rowRange{start: 0, stop: math.MaxInt, text: s}
	var err error
	if a != "" {
		if r.start, err = strconv.Atoi(a); err != nil {
			return nil, usageError("--rows %q: START is not an integer", s)
		}
	}
	if b != "" {
		if r.stop, err = strconv.Atoi(b); err != nil {
			return nil, usageError("--rows %q: STOP is not an integer", s)
		}
	}
	return r, nil
}

// span resolves the range on an array of n rows, as Python does.
func (r *rowRange) span(n int) (first, count int) {
	clamp := func(i int) int {
		if i < 0 {
			i = max(0, i+n)
		}
		return min(i, n)
	}
	first = clamp(r.start)
	return first, max(0, clamp(r.stop)-first)
}

// errNoRows: --rows on an array that cannot give rows alone.
var errNoRows = errors.New("--rows reads rows of .npy files and .npz members only")

// apply makes src the rows r of it: its shape says so at once, and the
// rows alone are read when its data is opened.
func (r *rowRange) apply(src arraySource) arraySource {
	if r == nil || src.err != nil {
		return src
	}
	switch {
	case src.rows == nil:
		src.err = errNoRows
		return src
	case len(src.shape) == 0:
		src.err = errors.New("--rows: a 0-d array has no rows")
		return src
	}
	first, count := r.span(src.shape[0])
	rowBytes := int64(0)
	if src.shape[0] > 0 {
		rowBytes = src.size / int64(src.shape[0])
	}
	read, start, stop := src.rows, r.start, r.stop
	src.fortran = false // the rows are read row-major
	src.shape = append([]int{count}, src.shape[1:]...)
	src.size = int64(count) * rowBytes
	src.dataOffset += int64(first) * rowBytes
	src.whole = true
	src.open = func() (io.ReadCloser, error) {
		a, err := read(start, stop)
		if err != nil {
			return nil, err
		}
		return nopCloser{bytes.NewReader(a.Data)}, nil
	}
	return src
}

// withRows makes fa's arrays the rows r of each.
func (fa *fileArrays) withRows(r *rowRange) {
	if r == nil {
		return
	}
	if fa.member != nil {
		member := fa.member
		fa.member = func(i int) arraySource { return r.apply(member(i)) }
		fa.wholeMember = nil // the rows are read alone
		fa.arrays = nil
		return
	}
	for i := range fa.arrays {
		fa.arrays[i] = r.apply(fa.arrays[i])
	}
}

// s3Output writes OUT (s3://BUCKET/KEY) as a multipart upload, completed
// by commit and aborted by abort or by SIGINT or SIGTERM. Its errors name
// OUT; an abort the store refuses or does not answer is said on standard
// error, with the upload's ID.
func s3Output(e env, name string, f remoteFlags) (*output, error) {
	w, err := remoteOptions(f, e.stderr).Create(context.Background(), name)
	if err != nil {
		return nil, err
	}
	abort := func() {
		if err := w.Abort(); err != nil {
			fmt.Fprintf(e.stderr, "ndpack: %v\n", err)
		}
	}
	remove := e.cleanup.add(abort)
	return &output{w: s3Writer{w, name}, commit: func() error {
		defer remove()
		return outputError(name, w.Close())
	}, abort: func() { abort(); remove() }}, nil
}

// s3Writer is an upload whose errors name it, as the output's, not the
// input's.
type s3Writer struct {
	w    *remote.Writer
	name string
}

func (s s3Writer) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	return n, outputError(s.name, err)
}

// outputError says err is the output's: its message names name.
func outputError(name string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: "write", Path: name, Err: err}
}

// displayName is name as messages show it: a URL without credentials.
func displayName(name string) string {
	if remote.IsURL(name) {
		return remote.Redact(name)
	}
	return name
}
