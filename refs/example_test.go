package refs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/refs"
	"github.com/ndpack/ndpack/zarr"
)

// References to an .npy in chunks of two rows: the array's metadata, and
// where each chunk lies in the file. Set().WriteTo writes them as the
// reference file Python opens with
// zarr.open(fsspec.get_mapper("reference://", fo="refs.json")) or
// xarray.open_dataset(mapper, engine="zarr", consolidated=False); here a
// Store reads them back.
func Example() {
	dir, err := os.MkdirTemp("", "refs-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	image, _ := ndarray.FromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7}, 4, 2)
	if err := npybridge.WriteFile(filepath.Join(dir, "image.npy"), image); err != nil {
		panic(err)
	}

	b := refs.Options{ChunkRows: 2}.NewBuilder()
	if err := b.AddFiles(context.Background(), []string{filepath.Join(dir, "image.npy")}); err != nil {
		fmt.Println(err)
		return
	}
	set := b.Set()
	for _, key := range set.Keys() {
		r, _ := set.Get(key)
		if r.URL == "" {
			fmt.Printf("%-13s %d bytes of metadata\n", key, len(r.Data))
			continue
		}
		fmt.Printf("%-13s bytes %d to %d of %s\n", key, r.Offset, r.Offset+r.Length, filepath.Base(r.URL))
	}

	store := refs.Options{}.Store(context.Background(), set)
	defer store.Close()
	arrays, err := zarr.ReadOptions{}.Open(store, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := arrays[0].Read()
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, _ := ndarray.Rows[float32](a)
	fmt.Println(arrays[0].Name, rows)
	// Output:
	// .zgroup       24 bytes of metadata
	// image/.zarray 218 bytes of metadata
	// image/.zattrs 81 bytes of metadata
	// image/0.0     bytes 128 to 144 of image.npy
	// image/1.0     bytes 144 to 160 of image.npy
	// image [[0 1] [2 3] [4 5] [6 7]]
}
