// Package conformance is ndpack's promise that it agrees with the reference
// implementations, NumPy (numpy.save, numpy.lib.format) and msgpack-python
// running YEP-110's reference pack_ndarray, and a corpus any implementation,
// in any language, can test itself with.
//
// The corpus (testdata/, embedded) was written by generate.py with Debian's
// numpy 1.24 and msgpack-python 1.0.3. Its manifest.json lists:
//
//   - Valid cases: one array each, as the .npy np.save writes (with Fortran
//     and format 2.0/3.0 variants) and the .ext ext 110 object the reference
//     packer writes. A reader must decode every file to the same array; a
//     writer must reproduce the np.save and .ext bytes exactly.
//   - Tolerated inputs: unusual but valid encodings, each of which must
//     decode to the array of the valid case it names.
//   - Negative inputs: each must be rejected; the manifest says why.
//
// Run checks a Codec against all of it as subtests.
package conformance

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

//go:embed testdata
var corpus embed.FS

// File is one file of the corpus.
type File struct {
	Path   string `json:"path"`   // relative to the corpus root
	SHA256 string `json:"sha256"` // hex digest of the file's bytes, checked by Read
	Size   int    `json:"size"`   // length in bytes
	Format string `json:"format"` // "npy" or "ext110"

	FortranOrder bool   `json:"fortran_order,omitempty"` // npy files of valid cases
	Version      string `json:"version,omitempty"`       // npy format version of valid cases

	Name   string `json:"name,omitempty"`   // tolerated and negative inputs
	Why    string `json:"why,omitempty"`    // why it is tolerated or bad
	Equals string `json:"equals,omitempty"` // the valid case a tolerated input equals
	Error  string `json:"error,omitempty"`  // the class of failure of a negative input
}

// Case is a valid array and the files that hold it.
type Case struct {
	Name     string `json:"name"`     // such as "b1_2x3"; tolerated inputs name it in Equals
	Typestr  string `json:"typestr"`  // numpy's dtype.str, such as "<f8" or "|V4"
	Shape    []int  `json:"shape"`    // [] for a 0-d array
	Standard bool   `json:"standard"` // a YEP-110 standard kind (b, i, u, f, c)
	Files    []File `json:"files"`    // every encoding of the array, each decoding to it
}

// Manifest describes the corpus.
type Manifest struct {
	Numpy     string `json:"numpy"`     // the numpy version that wrote the corpus
	Msgpack   string `json:"msgpack"`   // the msgpack-python version that ran pack_ndarray
	Valid     []Case `json:"valid"`     // arrays that must be read and written exactly
	Tolerated []File `json:"tolerated"` // unusual encodings that must be read
	Negative  []File `json:"negative"`  // inputs that must be refused
}

// FS returns the corpus as a file system rooted at the folder that holds
// manifest.json.
func FS() fs.FS {
	sub, err := fs.Sub(corpus, "testdata")
	if err != nil {
		panic(err) // the embedded folder is part of the build
	}
	return sub
}

// Load reads the manifest.
// It fails only if the embedded manifest does not decode, with an error
// wrapping the *json.SyntaxError or *json.UnmarshalTypeError.
func Load() (*Manifest, error) {
	b, err := fs.ReadFile(FS(), "manifest.json")
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("conformance: manifest.json: %w", err)
	}
	return &m, nil
}

// Read returns the bytes of a corpus file after checking them against the
// manifest's sha256.
// It fails with an error wrapping fs.ErrNotExist for a path not in the
// corpus, and with a plain error when the bytes do not match the sha256.
func Read(f File) ([]byte, error) {
	b, err := fs.ReadFile(FS(), f.Path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("conformance: %s does not match its sha256 in the manifest", f.Path)
	}
	return b, nil
}

// Seeds returns the bytes of every corpus file of the given format ("npy"
// or "ext110"), valid, tolerated and negative: seeds for fuzz targets.
func Seeds(format string) [][]byte {
	m, err := Load()
	if err != nil {
		panic(err)
	}
	var out [][]byte
	add := func(f File) {
		if f.Format == format {
			if b, err := Read(f); err == nil {
				out = append(out, b)
			}
		}
	}
	for _, c := range m.Valid {
		for _, f := range c.Files {
			add(f)
		}
	}
	for _, f := range append(append([]File{}, m.Tolerated...), m.Negative...) {
		add(f)
	}
	return out
}

// Codec is an implementation under test. A nil function is not tested.
// Encoders must write non-standard dtypes too (the corpus holds them).
type Codec struct {
	DecodeNPY    func([]byte) (*ndarray.Array, error) // a whole .npy file
	EncodeNPY    func(*ndarray.Array) ([]byte, error) // as np.save writes it
	DecodeExt110 func([]byte) (*ndarray.Array, error) // one ext 110 object, header included
	EncodeExt110 func(*ndarray.Array) ([]byte, error) // as pack_ndarray and msgpack-python write it
}

func (c Codec) decoder(format string) func([]byte) (*ndarray.Array, error) {
	if format == "npy" {
		return c.DecodeNPY
	}
	return c.DecodeExt110
}

func (c Codec) encoder(format string) func(*ndarray.Array) ([]byte, error) {
	if format == "npy" {
		return c.EncodeNPY
	}
	return c.EncodeExt110
}

// ErrNotTested is returned by a Check whose codec lacks the function it
// needs.
var ErrNotTested = errors.New("conformance: the codec has no function for this format")

// Check is one conformance check of the corpus.
type Check struct {
	// Name is valid/CASE/FILE, tolerated/NAME or negative/NAME.
	Name string
	// Why says what the input is, for tolerated and negative checks.
	Why string
	run func(Codec) error
}

// Run applies the check to codec: nil if it conforms, ErrNotTested if the
// codec lacks the function needed, or an error saying what was wrong.
func (c Check) Run(codec Codec) error { return c.run(codec) }

// Checks returns every check of the corpus: for each valid case and file,
// that it decodes to the case's array (the same for every file of the
// case) and that the canonical files re-encode byte for byte; for each
// tolerated input, that it decodes to the array of the case it names; for
// each negative input, that it is rejected.
// It fails as Load does, or with a plain error when a tolerated input names
// a case the manifest lacks.
func Checks() ([]Check, error) {
	m, err := Load()
	if err != nil {
		return nil, err
	}
	cases := map[string]Case{}
	var checks []Check
	for _, c := range m.Valid {
		cases[c.Name] = c
		for _, f := range c.Files {
			checks = append(checks, Check{Name: "valid/" + c.Name + "/" + f.Path, run: func(codec Codec) error { return checkValid(codec, c, f) }})
		}
	}
	for _, f := range m.Tolerated {
		c, ok := cases[f.Equals]
		if !ok {
			return nil, fmt.Errorf("conformance: %s names an unknown case %q", f.Path, f.Equals)
		}
		checks = append(checks, Check{Name: "tolerated/" + f.Name, Why: f.Why, run: func(codec Codec) error { return checkTolerated(codec, f, c) }})
	}
	for _, f := range m.Negative {
		checks = append(checks, Check{Name: "negative/" + f.Name, Why: f.Why, run: func(codec Codec) error { return checkNegative(codec, f) }})
	}
	return checks, nil
}

// Run checks codec against the whole corpus, one subtest per Check.
func Run(t *testing.T, codec Codec) {
	checks, err := Checks()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) {
			switch err := c.Run(codec); {
			case errors.Is(err, ErrNotTested):
				t.Skip(err)
			case err != nil:
				t.Fatal(err)
			}
		})
	}
}

func decode(codec Codec, f File) (*ndarray.Array, []byte, error) {
	b, err := Read(f)
	if err != nil {
		return nil, nil, err
	}
	dec := codec.decoder(f.Format)
	if dec == nil {
		return nil, b, ErrNotTested
	}
	a, err := dec(b)
	return a, b, err
}

func checkValid(codec Codec, c Case, f File) error {
	a, b, err := decode(codec, f)
	if err != nil {
		return fmt.Errorf("decode %s: %w", f.Path, err)
	}
	if a.DType.String() != c.Typestr || !slices.Equal(a.Shape, c.Shape) {
		return fmt.Errorf("%s decoded as %s %v, want %s %v", f.Path, a.DType, a.Shape, c.Typestr, c.Shape)
	}
	if ref := c.Files[0]; ref.Path != f.Path {
		want, _, err := decode(codec, ref)
		if err != nil {
			return fmt.Errorf("decode %s: %w", ref.Path, err)
		}
		if !a.Equal(want) {
			return fmt.Errorf("%s decodes to other values than %s", f.Path, ref.Path)
		}
	}
	canonical := f.Format == "ext110" || (f.Version == "1.0" && !f.FortranOrder)
	if enc := codec.encoder(f.Format); canonical && enc != nil {
		out, err := enc(a)
		if err != nil {
			return fmt.Errorf("encode %s: %w", f.Path, err)
		}
		if !bytes.Equal(out, b) {
			return fmt.Errorf("encoding %s differs from the reference (%d bytes, want %d)%s", f.Path, len(out), len(b), firstDiff(out, b))
		}
	}
	return nil
}

func checkTolerated(codec Codec, f File, c Case) error {
	got, _, err := decode(codec, f)
	if err != nil {
		return fmt.Errorf("%s (%s): %w", f.Path, f.Why, err)
	}
	ref := c.Files[len(c.Files)-1] // the case's ext 110 object, or its .npy
	if codec.decoder(ref.Format) == nil {
		ref = c.Files[0]
	}
	want, _, err := decode(codec, ref)
	if err != nil {
		return fmt.Errorf("decode %s: %w", ref.Path, err)
	}
	if !got.Equal(want) {
		return fmt.Errorf("%s (%s) decoded as %v, want the array of %s", f.Path, f.Why, got, c.Name)
	}
	return nil
}

func checkNegative(codec Codec, f File) error {
	a, _, err := decode(codec, f)
	switch {
	case errors.Is(err, ErrNotTested):
		return err
	case err == nil:
		return fmt.Errorf("%s was accepted (as %v) but must be rejected: %s", f.Path, a, f.Why)
	}
	return nil
}

func firstDiff(a, b []byte) string {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf(": first difference at byte %d (%#02x, want %#02x)", i, a[i], b[i])
		}
	}
	return ""
}
