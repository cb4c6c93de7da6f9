package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// httpSource is an object on an HTTP(S) server.
type httpSource struct {
	client *http.Client
	url    string // as given, credentials included
	name   string // without them
	server string // the host (and port), for the log
}

// newHTTPSource reads the object at u through c, which it copies to give
// it the redirect policy of redirected.
func newHTTPSource(c *http.Client, u *url.URL, rawURL, name string) *httpSource {
	cc := *c
	check := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		redirected(req, via)
		if check != nil {
			return check(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &httpSource{client: &cc, url: rawURL, name: name, server: u.Host}
}

// redirected takes from a request that follows a redirect what would carry
// a secret: the Referer, which net/http sets to the URL redirected from (a
// signed URL's query included), and, when the redirect leads to another
// host or port, every credential the first request carried.
func redirected(req *http.Request, via []*http.Request) {
	req.Header.Del("Referer")
	if len(via) > 0 && !strings.EqualFold(req.URL.Host, via[0].URL.Host) || len(via) > 0 && req.URL.Scheme != via[0].URL.Scheme {
		for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "WWW-Authenticate"} {
			req.Header.Del(h)
		}
		req.URL.User = nil
	}
}

func (h *httpSource) host() string { return h.server }

func (h *httpSource) request(ctx context.Context, method string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.url, nil)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it quotes the URL, which may hold a secret
		}
		return nil, fmt.Errorf("remote: %s: %v", h.name, err)
	}
	return req, nil
}

// do sends req, keeping the URL's secrets out of the error. A failure to
// get an answer (a connection refused, reset or timed out) is a
// *transportError, which a read may try again.
func (h *httpSource) do(req *http.Request) (*http.Response, error) {
	resp, err := h.client.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, fmt.Errorf("remote: %s %s: %w", req.Method, h.name, ctxErr)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it quotes the URL, which may hold a secret
		}
		return nil, &transportError{op: req.Method + " " + h.name, cause: err}
	}
	return resp, nil
}

func responseVersion(resp *http.Response) version {
	return version{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}
}

func (h *httpSource) head(ctx context.Context) (int64, version, io.ReadCloser, error) {
	req, err := h.request(ctx, http.MethodHead)
	if err != nil {
		return 0, version{}, nil, err
	}
	resp, err := h.do(req)
	if err != nil {
		return 0, version{}, nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		headErr := &statusError{op: "HEAD", url: h.name, status: resp.StatusCode}
		if resp.StatusCode == http.StatusNotFound {
			return 0, version{}, nil, headErr
		}
		// Some servers refuse HEAD (405, 501), and a URL signed for GET
		// alone (an S3 presigned URL) is refused it (403): ask for the
		// first byte instead, whose Content-Range gives the size.
		size, v, whole, err := h.firstByte(ctx)
		if err != nil {
			return 0, version{}, nil, headErr
		}
		return size, v, whole, nil
	}
	if resp.ContentLength < 0 {
		return 0, version{}, nil, fmt.Errorf("remote: HEAD %s: the server gives no Content-Length", h.name)
	}
	return resp.ContentLength, responseVersion(resp), nil, nil
}

// setPreconditions asks for the version v alone: If-Match with a strong
// ETag (412 otherwise), If-Range with the Last-Modified time when there is
// no ETag (the whole new object otherwise, which get then refuses). A weak
// ETag can be sent in neither; the answer's own ETag is compared instead.
func setPreconditions(req *http.Request, v version) {
	switch {
	case v.etag != "" && !strings.HasPrefix(v.etag, "W/"):
		req.Header.Set("If-Match", v.etag)
	case v.etag == "" && v.lastModified != "":
		req.Header.Set("If-Range", v.lastModified)
	}
}

func (h *httpSource) get(ctx context.Context, off, n int64, v version) (io.ReadCloser, bool, error) {
	req, err := h.request(ctx, http.MethodGet)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+n-1, 10))
	setPreconditions(req, v)
	resp, err := h.do(req)
	if err != nil {
		return nil, false, err
	}
	fail := func(err error) (io.ReadCloser, bool, error) {
		resp.Body.Close()
		return nil, false, err
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
		return resp.Body, false, nil
	case http.StatusOK:
		return resp.Body, true, nil // the server ignores Range
	case http.StatusPreconditionFailed:
		return fail(fmt.Errorf("%w: %s: it is no longer %s (412 Precondition Failed)", ErrChanged, h.name, v))
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
// first byte. A server that answers with the whole object instead gives
// its body too, which the object is then read from.
func (h *httpSource) firstByte(ctx context.Context) (int64, version, io.ReadCloser, error) {
	req, err := h.request(ctx, http.MethodGet)
	if err != nil {
		return 0, version{}, nil, err
	}
	req.Header.Set("Range", "bytes=0-0")
	resp, err := h.do(req)
	if err != nil {
		return 0, version{}, nil, err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		defer resp.Body.Close()
		cr := resp.Header.Get("Content-Range")
		_, total, ok := strings.Cut(cr, "/")
		size, err := strconv.ParseInt(total, 10, 64)
		if !ok || err != nil || size < 0 {
			return 0, version{}, nil, fmt.Errorf("remote: GET %s: Content-Range %q gives no size", h.name, cr)
		}
		return size, responseVersion(resp), nil, nil
	case http.StatusOK:
		if resp.ContentLength < 0 {
			resp.Body.Close()
			return 0, version{}, nil, fmt.Errorf("remote: GET %s: the server gives no Content-Length", h.name)
		}
		return resp.ContentLength, responseVersion(resp), resp.Body, nil
	}
	resp.Body.Close()
	return 0, version{}, nil, &statusError{op: "GET", url: h.name, status: resp.StatusCode}
}
