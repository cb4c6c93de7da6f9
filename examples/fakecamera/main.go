// Command fakecamera is a yaq daemon, speaking Avro RPC as yaqd-core daemons
// do, that simulates a camera as yaqd-fakes' fake-camera does: is-sensor,
// has-measure-trigger and has-mapping, each measurement a noisy "<i2" image
// of the configured area of interest.
//
//	go run ./examples/fakecamera --config cam.toml
//
// with cam.toml holding one table per daemon:
//
//	[cam]
//	port = 39111
//	host = "127.0.0.1"
//	aoi_width = 512
//
// yaqc.Client(39111) then talks to it as to any yaq daemon. A table may
// also set the connection limits yaq.Run reads (max_connections,
// idle_timeout, read_timeout, write_timeout); the defaults suit any client
// in normal use.
package main

import (
	_ "embed"
	"os"
)

//go:embed fakecamera.avpr
var protocol string

const version = "0.1.0"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	return runDaemons(args, os.Stdout, os.Stderr)
}
