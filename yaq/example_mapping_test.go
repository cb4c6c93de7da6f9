package yaq_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/ndpack/ndpack/yaq"
)

// A sensor whose measurement moves its one mapping in place, as
// yaqd-fakes' spectrometer does: SetMapping keeps mapping_id, where
// SetMappings (a new set of mappings) would number it anew.
func ExampleDaemon_SetMapping() {
	dir, _ := os.MkdirTemp("", "yaq-example")
	defer os.RemoveAll(dir)
	old, had := os.LookupEnv("XDG_DATA_HOME")
	os.Setenv("XDG_DATA_HOME", dir) // the state file goes here
	defer func() {
		if had {
			os.Setenv("XDG_DATA_HOME", old)
		} else {
			os.Unsetenv("XDG_DATA_HOME")
		}
	}()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	config := filepath.Join(dir, "sensor.toml")
	os.WriteFile(config, []byte(fmt.Sprintf("[s]\nport = %d\nhost = \"127.0.0.1\"\n", port)), 0o644)

	p := &yaq.Program{
		Kind:   "mysensor",
		Traits: []*yaq.Trait{yaq.HasMapping, yaq.HasMeasureTrigger, yaq.IsSensor},
		New: func(d *yaq.Daemon) error {
			d.Sensor.ChannelNames = []string{"counts"}
			d.Sensor.ChannelMappings = map[string][]string{"counts": {"where"}}
			n := 0.0
			d.Sensor.Measure = func(context.Context) (map[string]any, error) {
				n++
				d.SetMapping("where", n) // moved, same mapping_id
				return map[string]any{"counts": 10 * n}, nil
			}
			return nil
		},
		Stderr: io.Discard,
	}
	done := make(chan int)
	go func() { done <- p.Run([]string{"--config", config}) }()

	ctx := context.Background()
	var c *yaq.Client
	var err error
	for range 100 {
		if c, err = yaq.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for range 2 {
		if err := c.Call(ctx, "measure", nil, nil); err != nil {
			log.Fatal(err)
		}
		for busy := true; busy; time.Sleep(5 * time.Millisecond) {
			if err := c.Call(ctx, "busy", nil, &busy); err != nil {
				log.Fatal(err)
			}
		}
		var measured, mappings map[string]any
		if err := c.Call(ctx, "get_measured", nil, &measured); err != nil {
			log.Fatal(err)
		}
		if err := c.Call(ctx, "get_mappings", nil, &mappings); err != nil {
			log.Fatal(err)
		}
		fmt.Println(measured["measurement_id"], measured["mapping_id"], mappings["where"])
	}
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println("exit status", <-done)
	// Output:
	// 1 1 1
	// 2 1 2
	// exit status 0
}
