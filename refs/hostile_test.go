package refs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/zarr"
)

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct {
		doc   string
		class error
		text  string
	}{
		{`[]`, ndarray.ErrMalformed, "not a reference file's JSON object"},
		{`{"refs": {}}`, ErrUnsupported, "version missing (version 0?)"},
		{`{"version": 2, "refs": {}}`, ErrUnsupported, `version "2"`},
		{`{"version": 1}`, ndarray.ErrMalformed, `no "refs"`},
		{`{"version": 1, "gen": [{"key": "x"}], "refs": {}}`, ErrUnsupported, `generated references`},
		{`{"version": 1, "refs": {"a/0": ["f.npy", -1, 8]}}`, ndarray.ErrMalformed, `reference "a/0": refs: malformed reference file: its offset "-1" is not an integer from 0 to 2^53`},
		{`{"version": 1, "refs": {"a/0": ["f.npy", 0, 1e30]}}`, ndarray.ErrMalformed, `its length "1e30"`},
		{`{"version": 1, "refs": {"a/0": ["f.npy", 0]}}`, ndarray.ErrMalformed, `is not a string, [url] or [url, offset, length]`},
		{`{"version": 1, "refs": {"a/0": [7, 0, 1]}}`, ndarray.ErrMalformed, `its url "7" is not a string`},
		{`{"version": 1, "refs": {"a/0": "base64:!!"}}`, ndarray.ErrMalformed, `not base64`},
		{`{"version": 1, "refs": {"a": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`, ndarray.ErrTooDeep, `nest more than 64 deep`},
	} {
		_, err := Parse([]byte(c.doc))
		if !errors.Is(err, c.class) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%.60s: got %v, want %v with %q", c.doc, err, c.class, c.text)
		}
	}
	if _, err := (ParseOptions{MaxSize: 100}).Parse(bytes.Repeat([]byte(" "), 101)); !errors.Is(err, ndarray.ErrTooLarge) {
		t.Errorf("101 bytes over a bound of 100: %v", err)
	}
	s, err := Parse([]byte(`{"version": 1, "templates": {"u": "https://h/d"}, "refs": {"a": ["{{u}}/x.npy", 1, 2], "b": ["{{ u }}/y.npy"], "c": {"zarr_format": 2}, "d": "base64:AAE="}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := s.Get("a"); a.URL != "https://h/d/x.npy" || a.Offset != 1 || a.Length != 2 {
		t.Errorf("a: %+v", a)
	}
	if b, _ := s.Get("b"); b.URL != "https://h/d/y.npy" || b.Length != -1 {
		t.Errorf("b: %+v", b)
	}
	if c, _ := s.Get("c"); string(c.Data) != `{"zarr_format": 2}` {
		t.Errorf("c: %+v", c)
	}
	if d, _ := s.Get("d"); !bytes.Equal(d.Data, []byte{0, 1}) {
		t.Errorf("d: %+v", d)
	}
}

// hostileSet is a reference file of one array of shape and chunks of <f8
// whose chunk 0 is ref, the file it points at holding 100 bytes.
func hostileSet(t *testing.T, shape, chunks string, ref string) (*Set, string) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.bin")
	os.WriteFile(data, make([]byte, 100), 0o644)
	zarray := `{\"chunks\": ` + chunks + `, \"compressor\": null, \"dtype\": \"<f8\", \"fill_value\": null, \"filters\": null, \"order\": \"C\", \"shape\": ` + shape + `, \"zarr_format\": 2}`
	doc := `{"version": 1, "refs": {".zgroup": "{\"zarr_format\": 2}", "a/.zarray": "` + zarray + `", "a/0": ` + strings.ReplaceAll(ref, "DATA", data) + `}}`
	s, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return s, data
}

// TestHostileReferences: references past their file's end, to lengths a
// chunk cannot hold, or of a terabyte, are refused in bounded memory;
// a reference file from elsewhere may not read local files.
func TestHostileReferences(t *testing.T) {
	for _, c := range []struct {
		name, shape, chunks, ref string
		o                        Options
		class                    error
		text                     string
	}{
		{"past the end", "[4]", "[4]", `["DATA", 90, 32]`, Options{}, ErrRange, "bytes 90 to 122 of"},
		{"the whole file, of another size", "[4]", "[4]", `["DATA"]`, Options{}, ndarray.ErrTooLarge, "100 bytes, more than the 32 the key may hold"},
		{"a terabyte", "[137438953472]", "[137438953472]", `["DATA", 0, 1099511627776]`, Options{}, ndarray.ErrTooLarge, "a chunk of shape (137438953472,) of <f8 is 1099511627776 bytes"},
		{"longer than a chunk", "[4]", "[4]", `["DATA", 0, 64]`, Options{}, ndarray.ErrTooLarge, "64 bytes, more than the 32 the key may hold"},
		{"shorter than a chunk", "[4]", "[4]", `["DATA", 0, 16]`, Options{}, ndarray.ErrMalformed, `holds 16 bytes; a chunk of shape (4,) of <f8 holds 32`},
		{"a local file from elsewhere", "[4]", "[4]", `["DATA", 0, 32]`, Options{RemoteOnly: true}, ErrRange, "points at the local file"},
		{"a missing file", "[4]", "[4]", `["DATA.missing", 0, 32]`, Options{}, ErrRange, "data.bin.missing: no such file"},
	} {
		s, _ := hostileSet(t, c.shape, c.chunks, c.ref)
		var err error
		_, grew := hostile.HeapCost(func() {
			st := c.o.Store(context.Background(), s)
			defer st.Close()
			var arrays []*zarr.Array
			if arrays, err = (zarr.ReadOptions{}).Open(st, ""); err != nil {
				return
			}
			var r io.ReadCloser
			if r, err = arrays[0].NewReader(); err != nil {
				return
			}
			defer r.Close()
			_, err = io.Copy(io.Discard, r)
		})
		if err == nil || !errors.Is(err, c.class) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: got %v, want %v with %q", c.name, err, c.class, c.text)
		}
		if grew > 1<<20 {
			t.Errorf("%s: %d bytes allocated", c.name, grew)
		}
	}
}

// FuzzParse holds Parse to WriteTo: what it reads, WriteTo writes, and
// Parse reads that back as the same references.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"version": 1, "refs": {".zgroup": "{\"zarr_format\": 2}", "a/0": ["/d/a.npy", 128, 64], "b": ["s3://x/y"]}}`,
		`{"version": 1, "templates": {"u": "https://h"}, "refs": {"k": ["{{u}}/a", 0, 1], "m": {"x": [1, 2]}, "n": "base64:AAE="}}`,
		`{"version": 1, "gen": [], "refs": {}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			var ne *ndarray.Error
			if !errors.As(err, &ne) {
				t.Fatalf("%v is not an *ndarray.Error", err)
			}
			return
		}
		var out bytes.Buffer
		if _, err := s.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out.Bytes())
		if err != nil {
			t.Fatalf("wrote %q, cannot read it: %v", out.Bytes(), err)
		}
		if again.Len() != s.Len() {
			t.Fatalf("%d references, then %d", s.Len(), again.Len())
		}
		for _, k := range s.Keys() {
			r1, _ := s.Get(k)
			r2, ok := again.Get(k)
			if !ok || r1.URL != r2.URL || r1.Offset != r2.Offset || r1.Length != r2.Length || !bytes.Equal(r1.Data, r2.Data) && !(r1.Data == nil && len(r2.Data) == 0) {
				t.Fatalf("%q: %+v, then %+v", k, r1, r2)
			}
		}
	})
}
