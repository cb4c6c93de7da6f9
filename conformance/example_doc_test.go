package conformance_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// An implementation tests itself against the corpus with one line in a
// test, conformance.Run(t, codec), one subtest per check. Here the checks
// are run by hand for a codec that only reads .npy: the ext 110 and
// encoding checks are not tested, every .npy one passes, and a reader
// that accepts anything is caught by the negative inputs.
func ExampleChecks() {
	checks, err := conformance.Checks()
	if err != nil {
		panic(err)
	}
	reader := conformance.Codec{
		DecodeNPY: func(b []byte) (*ndarray.Array, error) { return npybridge.ReadOptions{}.Read(bytes.NewReader(b)) },
	}
	failed := 0
	for _, c := range checks {
		if err := c.Run(reader); err != nil && !errors.Is(err, conformance.ErrNotTested) {
			failed++
		}
	}
	fmt.Println("npybridge fails", failed)

	lenient := conformance.Codec{
		DecodeNPY: func([]byte) (*ndarray.Array, error) { return ndarray.Scalar(int8(0)), nil },
	}
	for _, c := range checks {
		if strings.HasPrefix(c.Name, "negative/npy_bad_magic") {
			fmt.Println(c.Name, "-", c.Why)
			fmt.Println(c.Run(lenient) != nil)
		}
	}
	// Output:
	// npybridge fails 0
	// negative/npy_bad_magic - the magic string is not \x93NUMPY
	// true
}

// The manifest says which numpy and msgpack-python wrote the corpus, and
// for each valid case the files that hold it: np.save's bytes in each
// format version and order, and the reference packer's ext 110 object.
// Read checks a file's bytes against the manifest's sha256.
func ExampleLoad() {
	m, err := conformance.Load()
	if err != nil {
		panic(err)
	}
	fmt.Println("numpy", m.Numpy, "msgpack", m.Msgpack)
	c := m.Valid[0]
	fmt.Println(c.Name, c.Typestr, c.Shape)
	for _, f := range c.Files {
		b, err := conformance.Read(f)
		fmt.Println(f.Path, f.Format, f.Version, f.FortranOrder, len(b) == f.Size, err)
	}
	// Output:
	// numpy 1.24.2 msgpack 1.0.3
	// b1_2x3 |b1 [2 3]
	// valid/b1_2x3.npy npy 1.0 false true <nil>
	// valid/b1_2x3.fortran.npy npy 1.0 true true <nil>
	// valid/b1_2x3.v2.npy npy 2.0 false true <nil>
	// valid/b1_2x3.v3.npy npy 3.0 false true <nil>
	// valid/b1_2x3.ext ext110  false true <nil>
}
