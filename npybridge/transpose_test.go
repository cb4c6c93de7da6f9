package npybridge

import (
	"bytes"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// Fortran-order data read in chunks that end anywhere (mid-column, mid-
// tile) lands exactly where ndarray's plain transpose puts it, for every
// item size, through the tiled path for matrices and the general one for
// more dimensions.
func TestColumnMajorReadMatchesTranspose(t *testing.T) {
	for _, c := range []struct {
		typestr string
		shape   []int
	}{
		{"|u1", []int{1000, 700}}, {"<u2", []int{33, 1025}}, {"|S3", []int{77, 900}},
		{"<f4", []int{257, 511}}, {"<f8", []int{1000, 700}}, {"<c16", []int{31, 3000}},
		{"<f8", []int{1, 5}}, {"<f8", []int{5, 1}}, {"<i4", []int{20, 30, 40}},
		{"<f8", []int{2048, 130}}, {"<i2", []int{3, 200001}}, {"<f8", []int{140001, 6}},
	} {
		dt := ndarray.MustParseDType(c.typestr)
		n, _ := ndarray.ByteSize(dt, c.shape)
		col := make([]byte, n)
		for i := range col {
			col[i] = byte(i*131 + i>>8)
		}
		want, err := ndarray.FromColumnMajor(dt, c.shape, col)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		if _, err := readColumnMajor(bytes.NewReader(col), got, c.shape, dt.ItemSize); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Data) {
			t.Errorf("%s %v: the tiled read differs from the transpose", c.typestr, c.shape)
		}
	}
}
