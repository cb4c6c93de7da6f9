// Package corpus reads the manifest of conformance's corpus (File, Case,
// Manifest) from the file system conformance.FS returns, for the module's
// own tests and for conformance itself; the public package exports only
// the corpus and its checks.
package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
)

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

// Load reads the manifest of the corpus fsys.
func Load(fsys fs.FS) (*Manifest, error) {
	b, err := fs.ReadFile(fsys, "manifest.json")
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("conformance: manifest.json: %w", err)
	}
	return &m, nil
}

// Read returns the bytes of a file of the corpus fsys after checking them
// against the manifest's sha256.
func Read(fsys fs.FS, f File) ([]byte, error) {
	b, err := fs.ReadFile(fsys, f.Path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("conformance: %s does not match its sha256 in the manifest", f.Path)
	}
	return b, nil
}
