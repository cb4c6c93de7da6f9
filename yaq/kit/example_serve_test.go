package kit_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/ndpack/ndpack/yaq"
	"github.com/ndpack/ndpack/yaq/kit"
)

// A daemon program's test serves it with Program.Serve: a config table as
// a map and a listener, no config file or free port.
func ExampleProgram_Serve() {
	dir, _ := os.MkdirTemp("", "kit-example")
	defer os.RemoveAll(dir)
	old, had := os.LookupEnv("XDG_DATA_HOME")
	os.Setenv("XDG_DATA_HOME", dir) // where the state file goes
	defer func() {
		if had {
			os.Setenv("XDG_DATA_HOME", old)
		} else {
			os.Unsetenv("XDG_DATA_HOME")
		}
	}()
	p := &kit.Program{Kind: "stage", Traits: []string{"has-limits"}, Stderr: io.Discard,
		New: func(d *kit.Daemon) error {
			d.Position.Move = func(to float64) error { d.Arrived(to); return nil }
			return nil
		}}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	d, err := p.Serve(l, "s1", map[string]any{"limits": []any{0.0, 10.0}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	ctx := context.Background()
	c, _ := yaq.Dial(ctx, l.Addr().String(), nil)
	defer c.Close()
	var pos float64
	_ = c.Call(ctx, "set_position", []any{12.5}, nil)
	_ = c.Call(ctx, "get_position", nil, &pos)
	fmt.Println(pos)
	// Output: 10
}
