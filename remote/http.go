package remote

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// httpSource is an object on an HTTP(S) server.
type httpSource struct {
	client *http.Client
	url    string // as given, credentials included
	name   string // without them
}

func (h *httpSource) request(ctx context.Context, method string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.url, nil)
	if err != nil {
		return nil, fmt.Errorf("remote: %s: %v", h.name, strings.ReplaceAll(err.Error(), h.url, h.name))
	}
	return req, nil
}

// do sends req, keeping the URL's secrets out of the error.
func (h *httpSource) do(req *http.Request) (*http.Response, error) {
	resp, err := h.client.Do(req)
	if err != nil {
		if ue, ok := err.(interface{ Unwrap() error }); ok && ue.Unwrap() != nil {
			if ctxErr := req.Context().Err(); ctxErr != nil {
				return nil, fmt.Errorf("remote: %s %s: %w", req.Method, h.name, ctxErr)
			}
			return nil, fmt.Errorf("remote: %s %s: %w", req.Method, h.name, ue.Unwrap())
		}
		return nil, fmt.Errorf("remote: %s %s: %w", req.Method, h.name, err)
	}
	return resp, nil
}

func responseVersion(resp *http.Response) version {
	return version{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}
}

func (h *httpSource) head(ctx context.Context) (int64, version, error) {
	req, err := h.request(ctx, http.MethodHead)
	if err != nil {
		return 0, version{}, err
	}
	resp, err := h.do(req)
	if err != nil {
		return 0, version{}, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		headErr := &statusError{op: "HEAD", url: h.name, status: resp.StatusCode}
		if resp.StatusCode == http.StatusNotFound {
			return 0, version{}, headErr
		}
		// Some servers refuse HEAD (405, 501), and a URL signed for GET
		// alone (an S3 presigned URL) is refused it (403): ask for the
		// first byte instead, whose Content-Range gives the size.
		size, v, err := h.firstByte(ctx)
		if err != nil {
			return 0, version{}, headErr
		}
		return size, v, nil
	}
	if resp.ContentLength < 0 {
		return 0, version{}, fmt.Errorf("remote: HEAD %s: the server gives no Content-Length", h.name)
	}
	return resp.ContentLength, responseVersion(resp), nil
}

func (h *httpSource) get(ctx context.Context, off, n int64, v version) (io.ReadCloser, error) {
	req, err := h.request(ctx, http.MethodGet)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+n-1, 10))
	resp, err := h.do(req)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (io.ReadCloser, error) {
		resp.Body.Close()
		return nil, err
	}
	if now := responseVersion(resp); (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent) && v.differs(now) {
		return fail(changed(h.name, v, now))
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, err := contentRangeStart(resp.Header.Get("Content-Range"))
		if err != nil || start != off {
			return fail(fmt.Errorf("remote: GET %s: asked for bytes from %d, the server answered Content-Range %q",
				h.name, off, resp.Header.Get("Content-Range")))
		}
		return resp.Body, nil
	case http.StatusOK:
		// The server ignores Range: skip to off in the whole body.
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			// A short skip is a short body: the caller resumes.
			return fail(fmt.Errorf("remote: GET %s: the whole body (the server ignores Range) ended before byte %d: %w", h.name, off, err))
		}
		return resp.Body, nil
	}
	return fail(&statusError{op: "GET", url: h.name, status: resp.StatusCode})
}

// contentRangeStart parses the first byte of "bytes FIRST-LAST/SIZE".
func contentRangeStart(s string) (int64, error) {
	s, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, fmt.Errorf("not a byte range")
	}
	first, _, ok := strings.Cut(s, "-")
	if !ok {
		return 0, fmt.Errorf("not a byte range")
	}
	return strconv.ParseInt(first, 10, 64)
}

// firstByte learns the size and version of the object from a GET of its
// first byte.
func (h *httpSource) firstByte(ctx context.Context) (int64, version, error) {
	req, err := h.request(ctx, http.MethodGet)
	if err != nil {
		return 0, version{}, err
	}
	req.Header.Set("Range", "bytes=0-0")
	resp, err := h.do(req)
	if err != nil {
		return 0, version{}, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusPartialContent:
		cr := resp.Header.Get("Content-Range")
		_, total, ok := strings.Cut(cr, "/")
		size, err := strconv.ParseInt(total, 10, 64)
		if !ok || err != nil || size < 0 {
			return 0, version{}, fmt.Errorf("remote: GET %s: Content-Range %q gives no size", h.name, cr)
		}
		return size, responseVersion(resp), nil
	case http.StatusOK:
		if resp.ContentLength < 0 {
			return 0, version{}, fmt.Errorf("remote: GET %s: the server gives no Content-Length", h.name)
		}
		return resp.ContentLength, responseVersion(resp), nil
	}
	return 0, version{}, &statusError{op: "GET", url: h.name, status: resp.StatusCode}
}
