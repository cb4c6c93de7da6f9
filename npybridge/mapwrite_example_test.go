//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package npybridge_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// One process creates the file; each worker (here two, in turn; in real
// use separate processes) opens it and fills its own rows.
func ExampleMapOptions_CreateMapped() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "result.npy")

	m, err := npybridge.MapOptions{}.CreateMapped(name, ndarray.DTypeOf[float64](), 4, 3)
	if err != nil {
		panic(err)
	}
	m.Close()

	for _, part := range [][2]int{{0, 2}, {2, 4}} {
		w, err := npybridge.MapOptions{}.OpenMappedWritable(name)
		if err != nil {
			panic(err)
		}
		rows, _ := w.Rows(part[0], part[1])
		v, _ := ndarray.Values[float64](rows) // aliases the file
		for i := range v {
			v[i] = float64(part[0]*3 + i)
		}
		w.Close()
	}

	a, _ := npybridge.ReadFile(name)
	v, _ := ndarray.Values[float64](a)
	fmt.Println(a.Shape, v)
	// Output: [4 3] [0 1 2 3 4 5 6 7 8 9 10 11]
}
