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
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/ndpack/ndpack/internal/corpus"
	"github.com/ndpack/ndpack/ndarray"
)

//go:embed testdata
var embedded embed.FS

// FS returns the corpus as a file system rooted at the folder that holds
// manifest.json.
func FS() fs.FS {
	sub, err := fs.Sub(embedded, "testdata")
	if err != nil {
		panic(err) // the embedded folder is part of the build
	}
	return sub
}

// Seeds returns the bytes of every corpus file of the given format ("npy"
// or "ext110"), valid, tolerated and negative: seeds for fuzz targets.
func Seeds(format string) [][]byte {
	m, err := corpus.Load(FS())
	if err != nil {
		panic(err)
	}
	var out [][]byte
	add := func(f corpus.File) {
		if f.Format == format {
			if b, err := corpus.Read(FS(), f); err == nil {
				out = append(out, b)
			}
		}
	}
	for _, c := range m.Valid {
		for _, f := range c.Files {
			add(f)
		}
	}
	for _, f := range append(append([]corpus.File{}, m.Tolerated...), m.Negative...) {
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

// errNotTested is returned by a check whose codec lacks the function it
// needs; Run skips it.
var errNotTested = errors.New("conformance: the codec has no function for this format")

// check is one conformance check of the corpus.
type check struct {
	// Name is valid/CASE/FILE, tolerated/NAME or negative/NAME.
	Name string
	// Why says what the input is, for tolerated and negative checks.
	Why string
	run func(Codec) error
}

// checks returns every check of the corpus: for each valid case and file,
// that it decodes to the case's array (the same for every file of the
// case) and that the canonical files re-encode byte for byte; for each
// tolerated input, that it decodes to the array of the case it names; for
// each negative input, that it is rejected.
func checks() ([]check, error) {
	m, err := corpus.Load(FS())
	if err != nil {
		return nil, err
	}
	cases := map[string]corpus.Case{}
	var all []check
	for _, c := range m.Valid {
		cases[c.Name] = c
		for _, f := range c.Files {
			all = append(all, check{Name: "valid/" + c.Name + "/" + f.Path, run: func(codec Codec) error { return checkValid(codec, c, f) }})
		}
	}
	for _, f := range m.Tolerated {
		c, ok := cases[f.Equals]
		if !ok {
			return nil, fmt.Errorf("conformance: %s names an unknown case %q", f.Path, f.Equals)
		}
		all = append(all, check{Name: "tolerated/" + f.Name, Why: f.Why, run: func(codec Codec) error { return checkTolerated(codec, f, c) }})
	}
	for _, f := range m.Negative {
		all = append(all, check{Name: "negative/" + f.Name, Why: f.Why, run: func(codec Codec) error { return checkNegative(codec, f) }})
	}
	return all, nil
}

// Run checks codec against the whole corpus, one subtest per check: for
// each valid case and file, that it decodes to the case's array (the same
// for every file of the case) and that the canonical files re-encode byte
// for byte; for each tolerated input, that it decodes to the array of the
// case it names; for each negative input, that it is rejected. A check
// needing a function the codec leaves nil is skipped.
func Run(t *testing.T, codec Codec) {
	all, err := checks()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			switch err := c.run(codec); {
			case errors.Is(err, errNotTested):
				t.Skip(err)
			case err != nil:
				t.Fatal(err)
			}
		})
	}
}

func decode(codec Codec, f corpus.File) (*ndarray.Array, []byte, error) {
	b, err := corpus.Read(FS(), f)
	if err != nil {
		return nil, nil, err
	}
	dec := codec.decoder(f.Format)
	if dec == nil {
		return nil, b, errNotTested
	}
	a, err := dec(b)
	return a, b, err
}

func checkValid(codec Codec, c corpus.Case, f corpus.File) error {
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

func checkTolerated(codec Codec, f corpus.File, c corpus.Case) error {
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

func checkNegative(codec Codec, f corpus.File) error {
	a, _, err := decode(codec, f)
	switch {
	case errors.Is(err, errNotTested):
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
