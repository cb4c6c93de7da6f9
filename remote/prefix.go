package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// maxPrefix bounds what OpenPrefix keeps of an object's first bytes.
const maxPrefix = 1 << 20

// OpenPrefix opens the object at rawURL as Open does, but asks for its
// first n bytes (at most 1 MiB) in place of the HEAD request: the answer
// to that one ranged GET gives the object's size and version, and its
// bytes are kept, so that a read within them makes no request. A file
// whose header is all a reader wants (an .npy's, for references to its
// data) costs one request; an object shorter than n is read whole by it.
// A server that ignores Range is read as Open reads one.
// It fails as Open does, the GET's answers taking the HEAD's place.
func (o Options) OpenPrefix(ctx context.Context, rawURL string, n int) (*Object, error) {
	n = max(1, min(n, maxPrefix))
	src, name, err := o.source(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	var p prefixAnswer
	switch s := src.(type) {
	case *httpSource:
		p, err = s.prefix(ctx, n)
	case *s3Source:
		p, err = s.prefix(ctx, n)
	}
	if err != nil {
		return nil, err
	}
	stall := o.stall
	if stall <= 0 {
		stall = defaultStall
	}
	obj := &Object{ctx: ctx, src: src, name: name, size: p.size, ver: p.ver, stall: stall, opts: o, ranged: make(chan struct{}), prefix: p.data}
	if p.whole != nil {
		obj.spoolFrom(p.whole)
	}
	return obj, nil
}

// prefixAnswer is what a GET of an object's first bytes told: its size,
// version and those bytes, or, from a server that ignores Range, the
// whole object's body.
type prefixAnswer struct {
	size  int64
	ver   version
	data  []byte
	whole io.ReadCloser
}

// contentRangeSize reads the size of "bytes FIRST-LAST/SIZE" or
// "bytes */SIZE".
func contentRangeSize(s string) (int64, bool) {
	_, total, ok := strings.Cut(s, "/")
	if !ok || !strings.HasPrefix(s, "bytes ") {
		return 0, false
	}
	size, err := strconv.ParseInt(total, 10, 64)
	return size, err == nil && size >= 0
}

// readPrefix reads the body of a ranged answer: the bytes from the
// object's start, min(n, size) of them.
func readPrefix(body io.Reader, n int, size int64, name string) ([]byte, error) {
	want := int(min(int64(n), size))
	data := make([]byte, want)
	got, err := io.ReadFull(body, data)
	if err != nil {
		return nil, fmt.Errorf("remote: GET %s: the answer ended after %d of the first %d bytes: %w", name, got, want, err)
	}
	return data, nil
}

func (h *httpSource) prefix(ctx context.Context, n int) (prefixAnswer, error) {
	req, err := h.request(ctx, http.MethodGet)
	if err != nil {
		return prefixAnswer{}, err
	}
	req.Header.Set("Range", "bytes=0-"+strconv.Itoa(n-1))
	resp, err := h.do(req)
	if err != nil {
		return prefixAnswer{}, err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		defer resp.Body.Close()
		cr := resp.Header.Get("Content-Range")
		size, ok := contentRangeSize(cr)
		if start, err := contentRangeStart(cr); !ok || err != nil || start != 0 {
			return prefixAnswer{}, fmt.Errorf("remote: GET %s: Content-Range %q is not the object's first bytes and its size", h.name, cr)
		}
		data, err := readPrefix(resp.Body, n, size, h.name)
		return prefixAnswer{size: size, ver: responseVersion(resp), data: data}, err
	case http.StatusRequestedRangeNotSatisfiable:
		resp.Body.Close()
		if size, ok := contentRangeSize(resp.Header.Get("Content-Range")); ok && size == 0 {
			return prefixAnswer{ver: responseVersion(resp), data: []byte{}}, nil
		}
	case http.StatusOK:
		if resp.ContentLength < 0 {
			resp.Body.Close()
			return prefixAnswer{}, fmt.Errorf("remote: GET %s: the server gives no Content-Length", h.name)
		}
		return prefixAnswer{size: resp.ContentLength, ver: responseVersion(resp), whole: resp.Body}, nil
	default:
		resp.Body.Close()
	}
	return prefixAnswer{}, &statusError{op: "GET", url: h.name, status: resp.StatusCode}
}

func (s *s3Source) prefix(ctx context.Context, n int) (prefixAnswer, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &s.key, Range: aws.String("bytes=0-" + strconv.Itoa(n-1))})
	if err != nil {
		err = s3Error("GetObject", s.name, err)
		var se *statusError
		if errors.As(err, &se) && se.status == http.StatusRequestedRangeNotSatisfiable {
			// An empty object has no first byte to ask for.
			size, v, whole, herr := s.head(ctx)
			return prefixAnswer{size: size, ver: v, data: []byte{}, whole: whole}, herr
		}
		return prefixAnswer{}, err
	}
	defer out.Body.Close()
	v := s3Version(out.ETag, out.LastModified)
	cr := aws.ToString(out.ContentRange)
	if cr == "" {
		// The whole object: the store ignores Range.
		size := aws.ToInt64(out.ContentLength)
		data, err := readPrefix(out.Body, int(min(size, maxPrefix)), size, s.name)
		if err == nil && size > int64(len(data)) {
			return prefixAnswer{}, fmt.Errorf("remote: GetObject %s: the store ignores Range", s.name)
		}
		return prefixAnswer{size: size, ver: v, data: data}, err
	}
	size, ok := contentRangeSize(cr)
	if start, err := contentRangeStart(cr); !ok || err != nil || start != 0 {
		return prefixAnswer{}, fmt.Errorf("remote: GetObject %s: Content-Range %q is not the object's first bytes and its size", s.name, cr)
	}
	data, err := readPrefix(out.Body, n, size, s.name)
	return prefixAnswer{size: size, ver: v, data: data}, err
}

// fromPrefix serves a read that lies within the object's first bytes,
// kept by OpenPrefix; ok is false when it does not.
func (r *Object) fromPrefix(off, n int64) (io.ReadCloser, bool) {
	if r.prefix == nil || off < 0 || off+n > int64(len(r.prefix)) {
		return nil, false
	}
	return io.NopCloser(bytes.NewReader(r.prefix[off : off+n])), true
}
