package kit_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/ndpack/ndpack/yaq/kit"
)

// A sensor whose measurement moves its one mapping in place, as
// yaqd-fakes' spectrometer does: SetMapping keeps mapping_id, where
// SetMappings (a new set of mappings) would number it anew.
func ExampleDaemon_SetMapping() {
	config, addr, cleanup := exampleConfig("sensor", "") // the state file goes beside it
	defer cleanup()

	p := &kit.Program{
		Kind:   "mysensor",
		Traits: []string{"has-mapping", "has-measure-trigger", "is-sensor"},
		New: func(d *kit.Daemon) error {
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
	c := dialStarted(ctx, addr)
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
