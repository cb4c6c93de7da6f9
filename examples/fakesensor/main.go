// Command fakesensor is a yaq-RPC daemon serving a simulated sensor whose
// channels are arrays sent as msgpack ext 110:
//
//	go run ./examples/fakesensor -addr 127.0.0.1:38000
//
// It behaves as yaqd-core's is-sensor and has-measure-trigger traits do:
// measure starts a measurement unless one is running and returns the id it
// will have, busy stays true until it has finished, and get_measured
// returns the last finished one (measurement_id, a 480x640 "<u2" image and
// a 1024 "<f8" spectrum). Also id, help, stop_looping, get_measurement_id,
// get_channel_names, get_channel_units, get_channel_shapes and shutdown.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"time"

	"github.com/ndpack/ndpack/yaqrpc"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:38000", "address to listen on")
	name := flag.String("name", "fakesensor", "the daemon's name, returned by id")
	maxMsg := flag.Int64("max-message", yaqrpc.DefaultMaxMessageSize, "largest accepted message, in bytes")
	flag.Parse()

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakesensor: %v\n", err)
		os.Exit(1)
	}
	srv := newServer(*name, *maxMsg)
	log.Printf("fakesensor %q listening on %s", *name, l.Addr())
	if err := srv.Serve(l); err != yaqrpc.ErrServerClosed {
		log.Fatal(err)
	}
}

// newServer builds the daemon's server; its shutdown method closes it.
func newServer(name string, maxMessage int64) *yaqrpc.Server {
	srv := yaqrpc.NewServer()
	srv.MaxMessageSize = maxMessage
	newSensor(name, 20*time.Millisecond).register(srv, func() { srv.Shutdown(context.Background()) })
	return srv
}
