package npybridge_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// ReadFile reads what np.save wrote, here a Fortran-order file as
// np.save(name, np.asfortranarray([[1, 2, 3], [4, 5, 6]], dtype='<i2'))
// writes it, byte for byte: the array comes back row-major.
func ExampleReadFile() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "f.npy")
	header := fmt.Sprintf("%-117s\n", "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }")
	data := "\x01\x00\x04\x00\x02\x00\x05\x00\x03\x00\x06\x00" // column by column
	if err := os.WriteFile(name, []byte("\x93NUMPY\x01\x00v\x00"+header+data), 0o644); err != nil {
		panic(err)
	}

	a, err := npybridge.ReadFile(name)
	if err != nil {
		panic(err)
	}
	v, _ := ndarray.Values[int16](a)
	fmt.Println(a.DType, a.Shape, v)

	_, err = npybridge.ReadFile(filepath.Join(dir, "missing.npy"))
	fmt.Println(errors.Is(err, os.ErrNotExist))
	// Output:
	// <i2 [2 3] [1 2 3 4 5 6]
	// true
}

// An archive as np.savez writes it, read one member at a time as np.load
// does: opening reads the zip directory only, Header decompresses no
// further than the member's header, and Read decodes one member.
func ExampleReadOptions_OpenNPZFile() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "run.npz")
	image, _ := ndarray.Zeros(ndarray.MustParseDType("<u2"), 480, 640)
	times, _ := ndarray.FromSlice([]float64{0, 0.5, 1})
	times, _ = times.ToOrder('<')
	err = npybridge.WriteNPZFile(name, []npybridge.NamedArray{
		{Name: "image", Array: image},
		{Name: "times", Array: times},
	}, true) // compressed, as np.savez_compressed
	if err != nil {
		panic(err)
	}

	z, err := npybridge.OpenNPZFile(name)
	if err != nil {
		panic(err)
	}
	defer z.Close()
	fmt.Println(z.Names())
	h, _ := z.Header("image")
	fmt.Println(h.DType, h.Shape)
	t, _ := z.Read("times")
	v, _ := ndarray.Values[float64](t)
	fmt.Println(v)
	// Output:
	// [image times]
	// <u2 [480 640]
	// [0 0.5 1]
}

// An acquisition loop adding one frame at a time to an .npy file that
// numpy (or ReadFile, OpenMapped) can load at any moment: after each
// Append the header counts the rows written so far. While app is open a
// second OpenAppend of the file fails with ErrLocked (where flock exists).
func ExampleAppendOptions_OpenAppend() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "frames.npy")
	dt := ndarray.MustParseDType("<u2")

	app, err := npybridge.AppendOptions{}.OpenAppend(context.Background(), name, dt, 2, 2) // rows of 2x2 frames
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		frame, _ := ndarray.FromSlice([]uint16{uint16(i), 0, 0, uint16(i)}, 2, 2)
		frame, _ = frame.ToOrder('<')
		if err := app.Append(frame); err != nil {
			panic(err)
		}
		h, _ := readHeader(name) // what a reader sees meanwhile
		fmt.Println(app.Rows(), h.Shape)
	}
	if err := app.Close(); err != nil {
		panic(err)
	}
	a, _ := npybridge.ReadFile(name)
	fmt.Println(a.Shape)
	// Output:
	// 1 [1 2 2]
	// 2 [2 2 2]
	// 3 [3 2 2]
	// [3 2 2]
}

func readHeader(name string) (*npybridge.Header, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return npybridge.ReadOptions{}.ReadHeader(f)
}

// OpenMapped views a file's data without reading it: opening a large file
// costs the same as a small one, and the pages are read when touched.
func ExampleReadOptions_OpenMapped() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "big.npy")
	a, _ := ndarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	a, _ = a.ToOrder('<')
	if err := npybridge.WriteFile(name, a); err != nil {
		panic(err)
	}

	m, err := npybridge.ReadOptions{}.OpenMapped(name)
	if err != nil {
		panic(err)
	}
	defer m.Close() // the Array must not be used after Close
	fmt.Println(m.Header.DType, m.Header.Shape, m.Header.DataOffset)
	row, _ := m.Rows(1, 3) // a view of rows 1 and 2, no copy
	v, _ := ndarray.Values[float32](row)
	fmt.Println(row.Shape, v)
	// Output:
	// <f4 [3 2] 128
	// [2 2] [3 4 5 6]
}
