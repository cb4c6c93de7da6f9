// Package remote reads objects on HTTP(S) servers and in S3 (and every store
// that speaks its protocol) as an io.ReaderAt with a size, by Range
// requests, and writes S3 objects in one stream by multipart upload. The
// npy and npz readers of npybridge take any io.ReaderAt and size, so an
// Object is read as a file is: only the bytes asked for travel.
//
// Reads are checked against the version of the object seen when it was
// opened (its ETag, else its Last-Modified): every read after the first
// answer asks for that version (If-Match, or If-Range), and an answer whose
// validator differs from it, or lacks it, fails with ErrChanged: an object
// that changes while it is read is never a mix of two versions. An object
// whose server gives neither validator is read as it is: a change is then
// seen only if its size changes. A body cut short is resumed from the byte
// reached; three resumes in a row that bring nothing fail with
// ndarray.ErrTruncated naming the byte. A server that ignores Range and
// answers with the whole object is read once, whole, into a temporary file
// (removed at once, so that nothing is left behind whatever ends the
// process) from which every read of the Object is then served; Options'
// ErrorLog says so once.
//
// S3 uses the AWS SDK for Go v2 with its standard configuration: the
// environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
// AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3 ...), the
// shared config and credentials files, and the other sources the SDK
// knows. When an endpoint is given, buckets are addressed by path
// (http://endpoint/BUCKET/KEY), as most S3-compatible stores expect.
//
// Errors start with "remote:" and name the object by its URL without
// credentials or query (no user, password or signature ever appears in
// one); an HTTP status of 404 matches fs.ErrNotExist and 403 (or 401)
// fs.ErrPermission under errors.Is.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ndpack/ndpack/ndarray"
)

var (
	// ErrChanged reports an object whose ETag or Last-Modified differs
	// from what it was when opened: the bytes read so far belong to
	// another version.
	ErrChanged = errors.New("remote: the object changed while it was read")
	// ErrUnsupported reports a URL whose scheme is not http, https or s3
	// (or, for Create, not s3).
	ErrUnsupported = errors.New("remote: unsupported URL")
)

// maxResumes is how many times in a row one read resumes a body cut short
// that brought no byte.
const maxResumes = 3

// IsURL reports whether name is a URL this package reads: http://,
// https:// or s3://.
func IsURL(name string) bool {
	return strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://") || strings.HasPrefix(name, "s3://")
}

// Options controls opening and creating objects. The zero value is the
// default.
type Options struct {
	// HTTPClient makes the requests to http:// and https:// objects;
	// nil means http.DefaultClient.
	HTTPClient *http.Client
	// PartSize is the size of the parts a large read fetches at once
	// and an S3 Writer uploads: 0 means 8 MiB, as S3's guidelines
	// advise. S3 refuses upload parts under 5 MiB but the last, so Create
	// refuses smaller values; reads take parts of 64 KiB or more.
	PartSize int64
	// Concurrency is how many parts a large read fetches, and a Writer
	// uploads, at once, each on a connection of its own: 0 means 8. A
	// store that caps each connection's speed (S3 serves about 5 Gbit/s a
	// connection) is read and written that many times as fast; the memory
	// held is at most Concurrency parts.
	Concurrency int
	// ErrorLog receives what a reader should know that is not an error:
	// that a server ignores Range requests, and its object is read whole,
	// once. nil means the log package's standard logger.
	ErrorLog *log.Logger

	// stall overrides defaultStall, and abortWait abortTimeout, for tests
	// that cannot wait a minute.
	stall, abortWait time.Duration
}

func (o Options) partSize() int64 {
	if o.PartSize <= 0 {
		return defaultPartSize
	}
	return max(o.PartSize, minReadPart)
}

func (o Options) concurrency() int {
	if o.Concurrency <= 0 {
		return defaultConcurrency
	}
	return o.Concurrency
}

// defaultConcurrency is Options.Concurrency's default; minReadPart the
// smallest part a read fetches.
const (
	defaultConcurrency = 8
	minReadPart        = 64 << 10
)

// logf logs through ErrorLog.
func (o Options) logf(format string, args ...any) {
	if o.ErrorLog != nil {
		o.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// defaultStall is how long a body may send nothing before the read gives
// up on it and resumes with a new request, as for a body cut short: a
// server that stops sending, or a network path that drops every packet,
// must not hang a reader whose context has no deadline.
const defaultStall = time.Minute

// defaultPartSize is the part size of an S3 Writer unless set.
const defaultPartSize = 8 << 20

// minPartSize is the smallest part S3 accepts (but for the last).
const minPartSize = 5 << 20

// version identifies one version of an object.
type version struct {
	etag, lastModified string
}

// differs reports whether w, the version an answer gave, is not v, the
// version the object was opened as: its validator (the ETag, else the
// Last-Modified time) differs or is missing.
func (v version) differs(w version) bool {
	if v.etag != "" {
		return v.etag != w.etag
	}
	return v.lastModified != "" && v.lastModified != w.lastModified
}

// source is what an Object reads through: an HTTP server or S3.
type source interface {
	// head returns the size and version of the object, and, when it had
	// to ask for a byte and the server answered with the whole object
	// instead, that answer's body.
	head(ctx context.Context) (int64, version, io.ReadCloser, error)
	// get returns a body of the n bytes at off, checked against v, or,
	// with whole set, of the whole object (a server that ignores Range).
	get(ctx context.Context, off, n int64, v version) (body io.ReadCloser, whole bool, err error)
	// host names the server, for the log.
	host() string
}

// Object is an object on an HTTP server or in S3, open for reading by
// ranges. Its methods may be called concurrently. Close it when done: an
// object whose server ignores Range holds a temporary copy until then.
type Object struct {
	ctx   context.Context
	src   source
	name  string
	size  int64
	ver   version
	stall time.Duration
	opts  Options

	spoolMu sync.Mutex
	spool   *spool // once the server was found to ignore Range

	prefix []byte // the object's first bytes, kept by OpenPrefix

	// ranged is closed once a ranged request was answered with the range:
	// a parallel read waits for that before it asks for more than one.
	ranged     chan struct{}
	rangedOnce sync.Once
}

// Open opens the object at rawURL (http://, https:// or s3://BUCKET/KEY)
// for reading: it asks for the object's size and version (a HEAD request)
// and reads nothing else. ctx governs every later read of the Object.
// It fails with an error wrapping ErrUnsupported for a URL that is not http,
// https or s3://BUCKET/KEY, with one matching fs.ErrNotExist (404) or
// fs.ErrPermission (401, 403) for such an answer to the HEAD request, a
// plain one for an answer without Content-Length, and with the HTTP client's
// or S3's error.
func (o Options) Open(ctx context.Context, rawURL string) (*Object, error) {
	src, name, err := o.source(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	size, ver, whole, err := src.head(ctx)
	if err != nil {
		return nil, err
	}
	stall := o.stall
	if stall <= 0 {
		stall = defaultStall
	}
	obj := &Object{ctx: ctx, src: src, name: name, size: size, ver: ver, stall: stall, opts: o, ranged: make(chan struct{})}
	if whole != nil {
		obj.spoolFrom(whole)
	}
	return obj, nil
}

func (o Options) source(ctx context.Context, rawURL string) (source, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the URL, which may hold a secret.
		return nil, "", fmt.Errorf("%w: %s: not a URL", ErrUnsupported, Redact(rawURL))
	}
	name := redactURL(u)
	switch u.Scheme {
	case "http", "https":
		c := o.HTTPClient
		if c == nil {
			c = http.DefaultClient
		}
		return newHTTPSource(c, u, rawURL, name), name, nil
	case "s3":
		s, err := newS3Source(ctx, u, name)
		return s, name, err
	}
	return nil, "", fmt.Errorf("%w: %s: the scheme is not http, https or s3", ErrUnsupported, name)
}

// Size returns the object's size in bytes.
func (r *Object) Size() int64 { return r.size }

// Name returns the object's URL without credentials or query, as errors
// name it.
func (r *Object) Name() string { return r.name }

// ReadAt reads len(p) bytes at off in one request (or, when a body is cut
// short, a few): read in large pieces, or through Stream. It returns io.EOF
// with the bytes there are when p runs past the object's end.
// It fails with an error wrapping ErrChanged when the object's version is no
// longer the one opened, an *ndarray.Error wrapping ndarray.ErrTruncated when a body keeps
// ending early, an error matching fs.ErrNotExist or fs.ErrPermission for
// such an answer, ctx's or the transport's error, and a plain error for a
// negative off.
func (r *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("remote: %s: negative offset %d", r.name, off)
	}
	if off >= r.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	s := r.Stream(off, want)
	defer s.Close()
	n, err := io.ReadFull(s, p[:want])
	if err == nil && want < int64(len(p)) {
		err = io.EOF
	}
	return n, err
}

// Stream returns a reader of the n bytes at off (fewer if the object ends
// first), fetched by one request as they are read and resumed where a body
// is cut short. A range of more than two parts (Options.PartSize) is
// fetched in parts on Options.Concurrency connections at once and handed
// on in order, in memory of at most that many parts. Close it when done.
func (r *Object) Stream(off, n int64) io.ReadCloser {
	off = max(off, 0)
	end := max(min(r.size, off+max(n, 0)), off)
	if rc, ok := r.fromPrefix(off, end-off); ok {
		return rc
	}
	part, conc := r.opts.partSize(), r.opts.concurrency()
	if conc > 1 && end-off > 2*part && !r.spooled() {
		return newParallel(r, off, end, part, conc)
	}
	return &stream{obj: r, off: off, end: end}
}

// stream reads the bytes [off, end) of an object.
type stream struct {
	obj      *Object
	off, end int64
	body     io.ReadCloser
	// skip is how many bytes of a whole object's body precede off: the
	// spool's own stream reads the object whole from where it reached.
	skip    int64
	spooled bool // read from the object's spool, not from a body
	feeds   bool // the spool's own stream, which reads bodies of the whole object
	resumes int  // bodies in a row that ended bringing nothing
	brought bool // the body read now brought bytes
	err     error

	// watch closes body when a read of it waits longer than obj.stall;
	// stalled says it did, for the error message.
	watch   *time.Timer
	stalled atomic.Bool
	// ctx, when set, governs this stream's requests instead of the
	// Object's (a part of a parallel read, ended with its read).
	ctx context.Context
}

// context is what governs the stream's requests.
func (s *stream) context() context.Context {
	if s.ctx != nil {
		return s.ctx
	}
	return s.obj.ctx
}

func (s *stream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.off >= s.end {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !s.feeds && (s.spooled || s.obj.spooled()) {
		return s.readSpool(p)
	}
	for {
		if s.body == nil {
			body, whole, err := s.obj.src.get(s.context(), s.off, s.end-s.off, s.obj.ver)
			var te *transportError
			if errors.As(err, &te) {
				// No answer came (a connection reset, say): tried again
				// as a body that brought nothing.
				if _, err := s.cut(0, err); err != nil {
					return 0, err
				}
				continue
			}
			if err != nil {
				s.err = err
				return 0, err
			}
			if whole && !s.feeds && (s.off > 0 || s.end < s.obj.size) {
				// The server ignores Range: the object is read once, into
				// the spool, and this read is served from there.
				s.obj.spoolFrom(body)
				return s.readSpool(p)
			}
			s.body, s.skip, s.brought = body, 0, false
			if whole {
				s.skip = s.off
			} else {
				s.obj.rangedOnce.Do(func() { close(s.obj.ranged) })
			}
		}
		if s.skip > 0 {
			k, err := io.CopyN(io.Discard, s.body, s.skip)
			s.skip -= k
			if err != nil {
				if n, err := s.cut(0, err); err != nil || n > 0 {
					return n, err
				}
				continue
			}
		}
		k := min(int64(len(p)), s.end-s.off)
		n, err := s.readWatched(p[:k])
		s.off += int64(n)
		if s.off >= s.end {
			s.close()
			return n, nil
		}
		s.brought = s.brought || n > 0
		if err == nil {
			if n > 0 {
				return n, nil
			}
			continue
		}
		if n, err := s.cut(n, err); err != nil || n > 0 {
			return n, err
		}
	}
}

// cut handles a body that ended or broke, after bringing n bytes, before
// the bytes asked for: the next read resumes from the byte reached, unless
// the context ended or bodies keep ending without bringing any. It returns
// the n bytes to deliver and the error that ends the stream, if any.
func (s *stream) cut(n int, err error) (int, error) {
	s.close()
	if cerr := s.context().Err(); cerr != nil {
		s.err = fmt.Errorf("remote: %s: %w", s.obj.name, cerr)
		return n, s.err
	}
	var te *transportError
	if errors.As(err, &te) {
		err = te.cause
	}
	if s.brought {
		s.resumes, s.brought = 0, false // it brought bytes: the count starts afresh
		return n, nil
	}
	if s.resumes == maxResumes {
		how := "ended early"
		if s.stalled.Load() {
			how = fmt.Sprintf("ended early or sent nothing for %v", s.obj.stall)
		}
		s.err = &ndarray.Error{Pkg: "remote", Err: ndarray.ErrTruncated, Offset: s.off,
			Detail: fmt.Sprintf("%s: the body %s %d times in a row, bringing no byte of the object", s.obj.name, how, maxResumes+1), Cause: err}
		return n, s.err
	}
	s.resumes++
	return n, nil
}

// readWatched reads the body, closing it (so that the read returns) if
// nothing arrives within the object's stall time. Each body has its own
// timer, reset for every read, so that a late firing can only close the
// body it was armed for.
func (s *stream) readWatched(p []byte) (int, error) {
	if s.watch == nil {
		body := s.body
		s.watch = time.AfterFunc(s.obj.stall, func() { s.stalled.Store(true); body.Close() })
	} else {
		s.watch.Reset(s.obj.stall)
	}
	n, err := s.body.Read(p)
	s.watch.Stop()
	return n, err
}

func (s *stream) close() {
	if s.watch != nil {
		s.watch.Stop()
		s.watch = nil
	}
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
}

// Close ends the request.
func (s *stream) Close() error {
	s.close()
	if s.err == nil {
		s.err = errors.New("remote: read after Close")
	}
	return nil
}

// transportError is a request that got no answer: a connection refused,
// reset or timed out, a name not found, a TLS failure. Its text says which.
type transportError struct {
	op    string // "GET https://host/path", for the message
	cause error
}

func (e *transportError) Error() string { return "remote: " + e.op + ": " + e.cause.Error() }
func (e *transportError) Unwrap() error { return e.cause }

// statusError is an answer other than the one asked for.
type statusError struct {
	op, url string
	status  int
	detail  string
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("remote: %s %s: %d %s", e.op, e.url, e.status, http.StatusText(e.status))
	if e.detail != "" {
		s += " (" + e.detail + ")"
	}
	return s
}

// Is matches fs.ErrNotExist for 404 and fs.ErrPermission for 401 and 403,
// and ErrChanged for 412 (a precondition on the version failed).
func (e *statusError) Is(target error) bool {
	switch e.status {
	case http.StatusNotFound:
		return target == fs.ErrNotExist
	case http.StatusUnauthorized, http.StatusForbidden:
		return target == fs.ErrPermission
	case http.StatusPreconditionFailed:
		return target == ErrChanged
	}
	return false
}

func changed(name string, was, now version) error {
	switch {
	case was.etag != "" && now.etag == "":
		return fmt.Errorf("%w: %s: opened as %s, and an answer gave no ETag: another version may have sent it", ErrChanged, name, was)
	case was.etag == "" && now.lastModified == "":
		return fmt.Errorf("%w: %s: opened as %s, and an answer gave no Last-Modified time: another version may have sent it", ErrChanged, name, was)
	}
	return fmt.Errorf("%w: %s: opened as %s, now %s", ErrChanged, name, was, now)
}

func (v version) String() string {
	if v.etag != "" {
		return "ETag " + v.etag
	}
	if v.lastModified != "" {
		return "Last-Modified " + v.lastModified
	}
	return "an unknown version"
}

// Redact returns rawURL without its user, password, query and fragment,
// for messages; a string that is no URL is cut at its first '@', '?' or
// '#' past the scheme.
func Redact(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return redactURL(u)
	}
	s := rawURL
	scheme := ""
	if i := strings.Index(s, "://"); i >= 0 {
		scheme, s = s[:i+3], s[i+3:]
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	return scheme + s
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.ForceQuery = false
	c.Fragment = ""
	c.RawFragment = ""
	return c.String()
}

// abortTimeout bounds the request that aborts an upload.
const abortTimeout = 10 * time.Second
