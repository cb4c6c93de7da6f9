package avro_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
)

// A value of a yaq message's response schema, a map whose values are an
// int, a double or an ndarray record, encoded and decoded again: records
// of the YEP-113 ndarray come back as *ndarray.Array, unions as their
// branch's value.
func Example() {
	schema, err := avro.ParseSchema(`{"type": "map", "values": ["int", "double", ` + avro.ArraySchema + `]}`)
	if err != nil {
		log.Fatal(err)
	}
	image, _ := ndarray.FromSlice([]uint16{1, 2, 3, 4, 5, 6}, 2, 3)
	b, err := schema.Append(nil, map[string]any{"image": image, "measurement_id": int32(7)})
	if err != nil {
		log.Fatal(err)
	}
	v, n, err := schema.Decode(b)
	if err != nil {
		log.Fatal(err)
	}
	m := v.(map[string]any)
	fmt.Println(n == len(b), m["measurement_id"], m["image"])

	_, err = schema.Append(nil, map[string]any{"gain": "high"})
	fmt.Println(err)
	// Output:
	// true 7 <u2 (2, 3)
	// avro: value does not fit its schema: .gain: a string is not a [int, double, ndarray]
}

// Named types defined once and referred to by name, as a protocol's
// "types" are.
func ExampleNames() {
	var names avro.Names
	if _, err := names.Parse(map[string]any{"type": "enum", "name": "level", "symbols": []any{"debug", "info"}}); err != nil {
		log.Fatal(err)
	}
	s, err := names.Parse(map[string]any{"type": "array", "items": "level"})
	if err != nil {
		log.Fatal(err)
	}
	b, _ := s.Append(nil, []any{"info", "debug"})
	fmt.Printf("%s % x\n", s, b)
	_, err = names.Parse("levels")
	fmt.Println(err)
	// Output:
	// array<level> 04 02 00 00
	// avro: invalid schema: unknown type "levels"
}

// A value that arrives in pieces, as a socket's reads cut it: the Scanner
// finds its end as the pieces come, scanning each byte once, and the value
// is decoded once it is whole.
func ExampleScanner() {
	schema, err := avro.ParseSchema(`{"type": "array", "items": "string"}`)
	if err != nil {
		log.Fatal(err)
	}
	whole, _ := schema.Append(nil, []any{"alpha", "beta", "gamma"})
	var sc avro.Scanner
	sc.Start(schema, 1<<20)
	var got []byte
	for _, piece := range [][]byte{whole[:4], whole[4:9], whole[9:]} {
		got = append(got, piece...)
		n, err := sc.Resume(got)
		if errors.Is(err, ndarray.ErrTruncated) {
			fmt.Printf("%d bytes: more to come\n", len(got))
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		v, _, err := schema.Decode(got[:n])
		fmt.Println(n, "bytes:", v, err)
	}
	// Output:
	// 4 bytes: more to come
	// 9 bytes: more to come
	// 19 bytes: [alpha beta gamma] <nil>
}
