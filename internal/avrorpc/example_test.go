package avrorpc_test

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"fmt"
	"log"

	"github.com/ndpack/ndpack/internal/avrorpc"
	"github.com/ndpack/ndpack/yaq/avro"
)

// The frames of a call as a yaq client writes them (meta, method name,
// parameters, an empty frame), read back as a daemon reads them.
func ExampleFrameReader() {
	var w avrorpc.FrameWriter
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

	r := avrorpc.NewFrameReader(bufio.NewReader(&stream), avrorpc.ReaderOptions{Peer: "client 127.0.0.1:50000"})
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
	var w avrorpc.FrameWriter
	w.Add(avrorpc.HandshakeResponse{Match: avrorpc.MatchNone, ServerProtocol: &protocol, ServerHash: &hash}.Append(nil))
	var stream bytes.Buffer
	w.Send(&stream)

	r := avrorpc.NewFrameReader(bufio.NewReader(&stream), avrorpc.ReaderOptions{DropRest: true})
	resp, err := r.ReadHandshakeResponse(1 << 20)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Match, *resp.ServerProtocol, md5.Sum([]byte(*resp.ServerProtocol)) == *resp.ServerHash)
	// Output:
	// NONE {"protocol": "tiny", "messages": {}} true
}
