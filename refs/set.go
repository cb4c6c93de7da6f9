package refs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/jsonscan"
	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors; every error of the package wraps one, for errors.Is,
// or the zarr or npybridge error that refused an input, or one of the
// classes every codec reports, ndarray's: ErrMalformed (a reference file
// that is not kerchunk's version 1 JSON: syntax, a reference that is not
// [url] or [url, offset, length], a negative offset or length),
// ErrTooLarge (a file over ParseOptions.MaxSize), ErrTooDeep (JSON that
// nests deeper than a reference file does).
var (
	// ErrUnsupported: an input references cannot point into (a deflated
	// .npz member, an object array, a Fortran-order array cut into rows,
	// a chunking that leaves the last chunk short), or a reference file
	// ndpack does not read (generated references, version 0).
	ErrUnsupported = errors.New("unsupported")
	// ErrRange: a reference to bytes its file does not hold (past its
	// end), or to a local file from a reference file that may not name
	// them.
	ErrRange = errors.New("bad reference")
)

// errFormat is ndarray.ErrMalformed as this package words it.
var errFormat = codecerr.Class("malformed reference file", ndarray.ErrMalformed)

func errorf(class error, format string, args ...any) error {
	return &ndarray.Error{Pkg: "refs", Err: class, Offset: -1, Detail: fmt.Sprintf(format, args...)}
}

// Ref is what one key of a Set holds: bytes of its own (Data, when URL is
// empty; a Zarr metadata file), or the Length bytes at Offset of the file
// at URL (a chunk). A Length of -1 is the whole file.
type Ref struct {
	Data           []byte
	URL            string
	Offset, Length int64
}

// Set is a reference set: Zarr v2 keys and what each holds. The zero Set
// is empty and ready to use.
type Set struct {
	refs map[string]Ref
}

// Put sets what key holds.
func (s *Set) Put(key string, r Ref) {
	if s.refs == nil {
		s.refs = map[string]Ref{}
	}
	s.refs[key] = r
}

// Get returns what key holds.
func (s *Set) Get(key string) (Ref, bool) {
	r, ok := s.refs[key]
	return r, ok
}

// Len returns the number of keys.
func (s *Set) Len() int { return len(s.refs) }

// Keys returns the keys, sorted.
func (s *Set) Keys() []string {
	keys := make([]string, 0, len(s.refs))
	for k := range s.refs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// WriteTo writes the set as a kerchunk reference file, version 1:
// {"version": 1, "refs": {...}}, one key a line in sorted order, a
// metadata file's bytes as a JSON string (as "base64:..." when they are
// not UTF-8), a range as [url, offset, length], a whole file as [url].
// Its error is w's.
func (s *Set) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	b.WriteString(`{"version": 1, "refs": {`)
	for i, k := range s.Keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n")
		appendString(&b, k)
		b.WriteString(": ")
		r := s.refs[k]
		switch {
		case r.URL == "" && utf8.Valid(r.Data) && !strings.HasPrefix(string(r.Data), "base64:"):
			appendString(&b, string(r.Data))
		case r.URL == "":
			appendString(&b, "base64:"+base64.StdEncoding.EncodeToString(r.Data))
		case r.Length < 0:
			b.WriteByte('[')
			appendString(&b, r.URL)
			b.WriteByte(']')
		default:
			b.WriteByte('[')
			appendString(&b, r.URL)
			fmt.Fprintf(&b, ", %d, %d]", r.Offset, r.Length)
		}
	}
	b.WriteString("\n}}\n")
	return b.WriteTo(w)
}

// appendString writes s as a JSON string, without encoding/json's HTML
// escapes.
func appendString(b *bytes.Buffer, s string) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	e.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// ParseOptions bounds what Parse reads. The zero value is the default.
type ParseOptions struct {
	// MaxSize bounds the reference file's bytes: 0 means
	// ndarray.DefaultMaxSize (64 MiB, about 500,000 references).
	MaxSize int64
}

// maxDepth is how deep a version 1 reference file nests:
// {"refs": {key: [url, offset, length]}}, and an inline value given as
// JSON rather than a string (a .zarray's dtype list within).
const maxDepth = 64

// Parse reads a kerchunk reference file, version 1: {"version": 1,
// "refs": {KEY: VALUE}} with an optional "templates" map ("{{name}}" in a
// URL is replaced by its template), each VALUE a string (the key's bytes;
// "base64:..." for binary), a JSON object (a metadata file's JSON), [url]
// (the whole file) or [url, offset, length]. The file is bounded by
// MaxSize and its nesting before it is decoded; offsets and lengths must
// be integers from 0 to 2^53.
// It fails with an *ndarray.Error wrapping errFormat, ErrUnsupported
// (generated references, "gen"; a file without version 1) or
// ndarray.ErrTooLarge.
func (o ParseOptions) Parse(b []byte) (*Set, error) {
	limit := o.MaxSize
	if limit <= 0 {
		limit = ndarray.DefaultMaxSize
	}
	if err := jsonscan.Check(b, limit, maxDepth); err != nil {
		var je *jsonscan.Error
		errors.As(err, &je)
		class := ndarray.ErrTooDeep
		if je.TooLarge {
			class = ndarray.ErrTooLarge
		}
		return nil, &ndarray.Error{Pkg: "refs", Err: class, Offset: je.Offset, Detail: je.Detail, Option: "ParseOptions.MaxSize"}
	}
	var top struct {
		Version   json.RawMessage            `json:"version"`
		Templates map[string]string          `json:"templates"`
		Gen       json.RawMessage            `json:"gen"`
		Refs      map[string]json.RawMessage `json:"refs"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, &ndarray.Error{Pkg: "refs", Err: errFormat, Offset: -1, Detail: "not a reference file's JSON object", Cause: err}
	}
	if string(bytes.TrimSpace(top.Version)) != "1" {
		return nil, errorf(ErrUnsupported, "version %s; ndpack reads kerchunk's reference files of version 1", versionText(top.Version))
	}
	if len(top.Gen) > 0 && string(bytes.TrimSpace(top.Gen)) != "null" && string(bytes.TrimSpace(top.Gen)) != "[]" {
		return nil, errorf(ErrUnsupported, `generated references ("gen") are not read`)
	}
	if top.Refs == nil {
		return nil, errorf(errFormat, `no "refs"`)
	}
	s := &Set{refs: make(map[string]Ref, len(top.Refs))}
	for k, v := range top.Refs {
		r, err := parseRef(v, top.Templates)
		if err != nil {
			return nil, fmt.Errorf("reference %s: %w", strconv.Quote(k), err)
		}
		s.refs[k] = r
	}
	return s, nil
}

// Parse is ParseOptions{}.Parse, failing as it does.
func Parse(b []byte) (*Set, error) { return ParseOptions{}.Parse(b) }

func versionText(v json.RawMessage) string {
	if len(v) == 0 {
		return "missing (version 0?)"
	}
	t := string(bytes.TrimSpace(v))
	if len(t) > 20 {
		t = t[:20] + "..."
	}
	return strconv.Quote(t)
}

// parseRef reads one reference.
func parseRef(v json.RawMessage, templates map[string]string) (Ref, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '{' {
		return Ref{Data: slices.Clone(v)}, nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if enc, ok := strings.CutPrefix(s, "base64:"); ok {
			data, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return Ref{}, errorf(errFormat, "its base64: text is not base64")
			}
			return Ref{Data: data}, nil
		}
		return Ref{Data: []byte(s)}, nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(v, &parts) != nil || len(parts) != 1 && len(parts) != 3 {
		return Ref{}, errorf(errFormat, "%s is not a string, [url] or [url, offset, length]", quote(v))
	}
	var url string
	if json.Unmarshal(parts[0], &url) != nil || url == "" {
		return Ref{}, errorf(errFormat, "its url %s is not a string", quote(parts[0]))
	}
	url = expand(url, templates)
	if len(parts) == 1 {
		return Ref{URL: url, Length: -1}, nil
	}
	var nums [2]int64
	for i, p := range parts[1:] {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(p)), 10, 64)
		if err != nil || n < 0 || n > 1<<53 {
			return Ref{}, errorf(errFormat, "its %s %s is not an integer from 0 to 2^53", []string{"offset", "length"}[i], quote(p))
		}
		nums[i] = n
	}
	return Ref{URL: url, Offset: nums[0], Length: nums[1]}, nil
}

// expand replaces "{{name}}" (spaces inside the braces allowed) by the
// template of that name, as fsspec's jinja2 rendering does for these.
func expand(url string, templates map[string]string) string {
	if len(templates) == 0 || !strings.Contains(url, "{{") {
		return url
	}
	var b strings.Builder
	for {
		i := strings.Index(url, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(url[i:], "}}")
		if j < 0 {
			break
		}
		b.WriteString(url[:i])
		name := strings.TrimSpace(url[i+2 : i+j])
		if t, ok := templates[name]; ok {
			b.WriteString(t)
		} else {
			b.WriteString(url[i : i+j+2])
		}
		url = url[i+j+2:]
	}
	b.WriteString(url)
	return b.String()
}

func quote(b []byte) string {
	const most = 60
	if len(b) > most {
		return strconv.Quote(string(b[:most])) + "..."
	}
	return strconv.Quote(string(b))
}
