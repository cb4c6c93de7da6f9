// Command fakesensor is a yaq-RPC daemon serving a simulated sensor whose
// channels are arrays sent as msgpack ext 110:
//
//	go run ./examples/fakesensor -addr 127.0.0.1:38000
//
// Its connection limits are yaqrpc.Server's, set with -max-connections,
// -idle-timeout, -read-timeout and -write-timeout; the defaults suit any
// client in normal use.
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
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaqrpc"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run is the daemon: it returns when the server has shut down, with the
// exit status.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakesensor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:38000", "address to listen on")
	name := fs.String("name", "fakesensor", "the daemon's name, returned by id")
	maxMsg := fs.Int64("max-message", ndarray.DefaultMaxSize, "largest accepted message, in bytes")
	maxConns := fs.Int("max-connections", 0, "connections served at once (0: 1024, or 3/4 of the open-file limit if less; -1: no cap)")
	idle := fs.Duration("idle-timeout", 0, "how long a connection may wait between requests (0: an hour; -1s: no limit)")
	readTimeout := fs.Duration("read-timeout", 0, "how long a request may take to arrive once begun (0: a minute; -1s: no limit)")
	writeTimeout := fs.Duration("write-timeout", 0, "how long a client that has stopped reading keeps its connection (0: 20s; -1s: no limit)")
	if err := fs.Parse(args); err != nil {
		return 2
	}

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "fakesensor: %v\n", err)
		return 1
	}
	srv, stopped := newServer(*name, *maxMsg)
	srv.MaxConnections = *maxConns
	srv.IdleTimeout, srv.ReadTimeout, srv.WriteTimeout = *idle, *readTimeout, *writeTimeout
	srv.ErrorLog = log.New(stderr, "", log.LstdFlags)
	srv.ErrorLog.Printf("fakesensor %q listening on %s", *name, l.Addr())
	if err := srv.Serve(l); !errors.Is(err, net.ErrClosed) {
		fmt.Fprintf(stderr, "fakesensor: %v\n", err)
		return 1
	}
	// Serve returns as soon as the shutdown begins; the answers in hand,
	// the shutdown method's own among them, are sent by the time it ends.
	<-stopped
	return 0
}

// newServer builds the daemon's server; its shutdown method shuts it
// down, and the channel is closed once that is done.
func newServer(name string, maxMessage int64) (*yaqrpc.Server, <-chan struct{}) {
	srv := &yaqrpc.Server{}
	srv.MaxSize = maxMessage
	stopped := make(chan struct{})
	newSensor(name, 20*time.Millisecond).register(srv, func() {
		srv.Shutdown(context.Background())
		close(stopped)
	})
	return srv, stopped
}
