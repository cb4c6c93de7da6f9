package conformance_test

import (
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/ndpack/ndpack/conformance"
)

// The corpus is a file system: manifest.json lists every file with its
// sha256, and an implementation in any language reads the same files.
// From Go, conformance.Run(t, codec) runs every check as subtests.
func ExampleFS() {
	b, err := fs.ReadFile(conformance.FS(), "manifest.json")
	if err != nil {
		panic(err)
	}
	var m struct {
		Numpy, Msgpack string
		Valid          []struct {
			Name, Typestr string
			Files         []struct{ Path string }
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	fmt.Println("numpy", m.Numpy, "msgpack", m.Msgpack)
	fmt.Println(m.Valid[0].Name, m.Valid[0].Typestr, m.Valid[0].Files[0].Path)
	// Output:
	// numpy 1.24.2 msgpack 1.0.3
	// b1_2x3 |b1 valid/b1_2x3.npy
}

// Seeds gives fuzz targets every file of one format, valid or not.
func ExampleSeeds() {
	fmt.Println(len(conformance.Seeds("npy")) > 100, len(conformance.Seeds("ext110")) > 50)
	// Output:
	// true true
}
