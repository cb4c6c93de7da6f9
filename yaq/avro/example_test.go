package avro_test

import (
	"bufio"
	"bytes"
	"crypto/md5"
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

// The frames of a call as a yaq client writes them (meta, method name,
// parameters, an empty frame), read back as a daemon reads them.
func ExampleFrameReader() {
	var w avro.FrameWriter
	double, _ := avro.ParseSchema(`"double"`)
	meta, _ := avro.ParseSchema(`{"type": "map", "values": "bytes"}`)
	str, _ := avro.ParseSchema(`"string"`)
	position, _ := double.Append(nil, 2.5)
	w.Add([]byte{0x00}) // an empty meta map
	w.AddString("set_position")
	w.Add(position)
	w.Add() // the end of the call
	var stream bytes.Buffer
	if err := w.Send(&stream); err != nil {
		log.Fatal(err)
	}

	r := avro.NewFrameReader(bufio.NewReader(&stream), avro.ReaderOptions{Peer: "client 127.0.0.1:50000"})
	m, _ := r.CappedValue(meta, 64<<10, "meta map")
	name, _ := r.SmallValue(str)
	to, _ := r.Value(double)
	skipped, _ := r.SkipEmptyFrame()
	fmt.Println(m, name, to, skipped)
	_, err := r.Value(str)
	fmt.Println(err)
	// Output:
	// map[] set_position 2.5 true
	// avro: truncated input at byte 38: client 127.0.0.1:50000 closed the connection, where the string value was to come: EOF
}

// A server's answer to a client that sent no protocol: NONE, with the
// server's protocol and its hash, read as a client reads it.
func ExampleHandshakeResponse() {
	protocol := `{"protocol": "tiny", "messages": {}}`
	hash := md5.Sum([]byte(protocol))
	var w avro.FrameWriter
	w.Add(avro.HandshakeResponse{Match: avro.MatchNone, ServerProtocol: &protocol, ServerHash: &hash}.Append(nil))
	var stream bytes.Buffer
	w.Send(&stream)

	r := avro.NewFrameReader(bufio.NewReader(&stream), avro.ReaderOptions{DropRest: true})
	resp, err := r.ReadHandshakeResponse(1 << 20)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Match, *resp.ServerProtocol, md5.Sum([]byte(*resp.ServerProtocol)) == *resp.ServerHash)
	// Output:
	// NONE {"protocol": "tiny", "messages": {}} true
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
