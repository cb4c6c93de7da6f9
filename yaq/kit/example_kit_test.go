package kit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/ndpack/ndpack/yaq"
	"github.com/ndpack/ndpack/yaq/kit"
)

// A daemon that states its traits: the kit answers id, busy, get_config,
// set_position (clamped to the config's limits), get_limits and the rest,
// and the daemon says only how its stage moves. The client waits for busy
// before it reads the position, as yaq clients do.
func ExampleProgram() {
	config, addr, cleanup := exampleConfig("stage", "limits = [0, 10]\n") // the state file goes beside it
	defer cleanup()

	p := &kit.Program{
		Kind:    "mystage",
		Version: "1.0.0",
		Traits:  []string{"is-daemon", "has-limits"},
		New: func(d *kit.Daemon) error {
			d.Position.Move = func(to float64) error {
				d.Go(func(ctx context.Context) { // a slow stage
					time.Sleep(20 * time.Millisecond)
					d.Arrived(to)
				})
				return nil
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
	var id map[string]any
	if err := c.Call(ctx, "id", nil, &id); err != nil {
		log.Fatal(err)
	}
	fmt.Println(id["name"], id["kind"], c.Protocol().Traits)
	if err := c.Call(ctx, "set_position", []any{12.0}, nil); err != nil {
		log.Fatal(err)
	}
	for busy := true; busy; time.Sleep(5 * time.Millisecond) {
		if err := c.Call(ctx, "busy", nil, &busy); err != nil {
			log.Fatal(err)
		}
	}
	var pos float64
	if err := c.Call(ctx, "get_position", nil, &pos); err != nil {
		log.Fatal(err)
	}
	fmt.Println("position", pos)
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println("exit status", <-done)
	// Output:
	// stage mystage [has-limits has-position is-daemon]
	// position 10
	// exit status 0
}

// A description in the TOML yaq daemons publish, composed with its traits;
// an error names the file and the key.
func ExampleComposeTOML() {
	desc := []byte(`
protocol = "oven"
traits = ["has-limits", "is-daemon"]

[state.ramp_time]
type = "double"
default = 0.0

[messages.set_ramp_time]
request = [{name = "minutes", type = "double"}]
`)
	c, err := kit.ComposeTOML("oven.toml", desc)
	if err != nil {
		log.Fatal(err)
	}
	p, _ := yaq.ParseProtocol(c.JSON)
	fmt.Println(c.Name, c.Traits, len(p.Messages), "messages")

	_, err = kit.ComposeTOML("oven.toml", []byte("protocol = \"oven\"\ntraits = [\"is-daemon\", \"has-limit\"]\n"))
	fmt.Println(errors.Is(err, kit.ErrDescription), strings.SplitN(err.Error(), " (", 2)[0])
	// Output:
	// oven [has-limits has-position is-daemon] 14 messages
	// true yaq: bad daemon description: oven.toml: traits[1]: unknown trait "has-limit"
}
