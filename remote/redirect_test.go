package remote

import (
	"net/http"
	"net/url"
	"testing"
)

// A redirect drops the Referer always, and every credential when it leads
// to another host, port or scheme.
func TestRedirectDropsSecrets(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		keep     bool
	}{
		{"https://u:p@data.example.org/a.npy?sig=1", "https://data.example.org/b.npy", true},
		{"https://data.example.org/a.npy", "https://cdn.example.net/b.npy", false},
		{"https://data.example.org/a.npy", "https://data.example.org:8443/b.npy", false},
		{"https://data.example.org/a.npy", "http://data.example.org/b.npy", false},
	} {
		from, _ := url.Parse(tc.from)
		to, _ := url.Parse(tc.to)
		to.User = url.UserPassword("u", "p")
		req := &http.Request{URL: to, Header: http.Header{
			"Referer":       {tc.from},
			"Authorization": {"Basic dTpw"},
			"Cookie":        {"session=1"},
		}}
		redirected(req, []*http.Request{{URL: from}})
		if req.Header.Get("Referer") != "" {
			t.Errorf("%s -> %s: Referer %q kept", tc.from, tc.to, req.Header.Get("Referer"))
		}
		kept := req.Header.Get("Authorization") != "" || req.Header.Get("Cookie") != "" || req.URL.User != nil
		if kept != tc.keep {
			t.Errorf("%s -> %s: credentials kept %v, want %v", tc.from, tc.to, kept, tc.keep)
		}
	}
}
