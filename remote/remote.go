// Package remote reads objects on HTTP(S) servers and in S3 (and every store
// that speaks its protocol) as an io.ReaderAt with a size, by Range
// requests, and writes S3 objects in one stream by multipart upload. The
// npy and npz readers of npybridge take any io.ReaderAt and size, so an
// Object is read as a file is: only the bytes asked for travel.
//
// Reads are checked against the version of the object seen when it was
// opened (its ETag, else its Last-Modified): an object that changes while
// it is read fails with ErrChanged, never yields a mix of two versions. A
// body cut short is resumed from the byte reached, at most three times per
// read, then fails with ErrTruncated naming the byte. A server that ignores
// Range and answers with the whole object is still read correctly, by
// skipping to the bytes asked for.
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
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ndpack/ndpack/internal/codecerr"
)

var (
	// ErrTruncated is the module's shared sentinel (the same value as
	// npybridge.ErrTruncated): a body ended early and resuming it failed.
	ErrTruncated = codecerr.ErrTruncated
	// ErrChanged reports an object whose ETag or Last-Modified differs
	// from what it was when opened: the bytes read so far belong to
	// another version.
	ErrChanged = errors.New("remote: the object changed while it was read")
	// ErrUnsupported reports a URL whose scheme is not http, https or s3
	// (or, for Create, not s3).
	ErrUnsupported = errors.New("remote: unsupported URL")
)

// maxResumes is how many times one read resumes a body cut short.
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
	// PartSize is the size of the parts an S3 Writer uploads, and so the
	// memory it holds; 0 means DefaultPartSize. S3 refuses parts under
	// 5 MiB but the last, so smaller values are refused.
	PartSize int64
}

// DefaultPartSize is the part size of an S3 Writer unless set.
const DefaultPartSize = 8 << 20

// MinPartSize is the smallest part S3 accepts (but for the last).
const MinPartSize = 5 << 20

// version identifies one version of an object.
type version struct {
	etag, lastModified string
}

// differs reports whether v and w are visibly different versions.
func (v version) differs(w version) bool {
	if v.etag != "" && w.etag != "" {
		return v.etag != w.etag
	}
	return v.lastModified != "" && w.lastModified != "" && v.lastModified != w.lastModified
}

// source is what an Object reads through: an HTTP server or S3.
type source interface {
	// head returns the size and version of the object.
	head(ctx context.Context) (int64, version, error)
	// get returns a body holding at least the n bytes at off (it may
	// hold more), checked against v.
	get(ctx context.Context, off, n int64, v version) (io.ReadCloser, error)
}

// Object is an object on an HTTP server or in S3, open for reading by
// ranges. Its methods may be called concurrently.
type Object struct {
	ctx  context.Context
	src  source
	name string
	size int64
	ver  version
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
	size, ver, err := src.head(ctx)
	if err != nil {
		return nil, err
	}
	return &Object{ctx: ctx, src: src, name: name, size: size, ver: ver}, nil
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
		return &httpSource{client: c, url: rawURL, name: name}, name, nil
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
// longer the one opened, a *TruncatedError (ErrTruncated) when a body keeps
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
// is cut short. Close it when done.
func (r *Object) Stream(off, n int64) io.ReadCloser {
	end := min(r.size, off+max(n, 0))
	return &stream{obj: r, off: max(off, 0), end: max(end, off)}
}

// stream reads the bytes [off, end) of an object.
type stream struct {
	obj      *Object
	off, end int64
	body     io.ReadCloser
	resumes  int
	err      error
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
	for {
		if s.body == nil {
			body, err := s.obj.src.get(s.obj.ctx, s.off, s.end-s.off, s.obj.ver)
			if err != nil {
				s.err = err
				return 0, err
			}
			s.body = body
		}
		k := min(int64(len(p)), s.end-s.off)
		n, err := s.body.Read(p[:k])
		s.off += int64(n)
		if s.off >= s.end {
			s.close()
			return n, nil
		}
		if err == nil {
			if n > 0 {
				return n, nil
			}
			continue
		}
		// The body ended or broke before the bytes asked for.
		s.close()
		if cerr := s.obj.ctx.Err(); cerr != nil {
			s.err = fmt.Errorf("remote: %s: %w", s.obj.name, cerr)
			return n, s.err
		}
		if s.resumes == maxResumes {
			s.err = &TruncatedError{URL: s.obj.name, Offset: s.off, Cause: err}
			return n, s.err
		}
		s.resumes++
		if n > 0 {
			return n, nil
		}
	}
}

func (s *stream) close() {
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

// TruncatedError reports a body that kept ending early: resumed three
// times, it still did not reach the bytes asked for. It matches
// ErrTruncated under errors.Is.
type TruncatedError struct {
	URL    string // without credentials
	Offset int64  // the first byte not received
	Cause  error  // what the last body ended with
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("remote: %s: truncated input at byte %d: the body ended early %d times (%v)", e.URL, e.Offset, maxResumes+1, e.Cause)
}

// Unwrap makes errors.Is match ErrTruncated.
func (e *TruncatedError) Unwrap() []error { return []error{ErrTruncated, e.Cause} }

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

// abortTimeout bounds the request that aborts an upload after its context
// ended.
const abortTimeout = 30 * time.Second
