package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// ThreeMiBNPY writes an .npy of 3 MiB of <u2 values, i%65536 at index i,
// for the tests that truncate a file while it is read. The header is
// np.save's, written here because npybridge's own tests use it too.
func ThreeMiBNPY(t testing.TB) (string, *ndarray.Array) {
	t.Helper()
	v := make([]uint16, 3<<19)
	for i := range v {
		v[i] = uint16(i)
	}
	a, err := ndarray.FromSlice(v)
	if err != nil {
		t.Fatal(err)
	}
	if a, err = a.ToOrder('<'); err != nil {
		t.Fatal(err)
	}
	dict := fmt.Sprintf("{'descr': '<u2', 'fortran_order': False, 'shape': (%d,), }", len(v))
	pad := 64 - (10+len(dict)+1)%64
	header := dict + strings.Repeat(" ", pad%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	b = append(append(b, header...), a.Data...)
	p := filepath.Join(t.TempDir(), "in.npy")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, a
}
