package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq"
)

func runDaemons(args []string, stdout, stderr io.Writer) int {
	return yaq.Run("fakecamera", version, protocol, args, stdout, stderr, setup)
}

// camera is one simulated camera: measure starts a measurement unless one
// runs, busy stays true until it has finished, get_measured gives the last
// one finished, as yaqd-core's is-sensor and has-measure-trigger behave.
type camera struct {
	width, height, left, top int
	exposure                 time.Duration

	mu            sync.Mutex
	busy, looping bool
	measurementID int
	measured      map[string]any
	rng           *rand.Rand
}

func setup(d *yaq.Daemon) error {
	c := &camera{measured: map[string]any{"measurement_id": 0}, rng: rand.New(rand.NewPCG(1, 2))}
	cfg := d.Config
	for key, dst := range map[string]*int{"aoi_width": &c.width, "aoi_height": &c.height, "aoi_left": &c.left, "aoi_top": &c.top} {
		v, ok := cfg[key].(int64)
		if !ok || v < 0 || v > 1<<14 {
			return fmt.Errorf("config %s must be an integer from 0 to 16384", key)
		}
		*dst = int(v)
	}
	ms, ok := cfg["exposure_ms"].(float64)
	if !ok || ms < 0 {
		return fmt.Errorf("config exposure_ms must be a number of milliseconds")
	}
	c.exposure = time.Duration(ms * float64(time.Millisecond))
	d.Busy = func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.busy }
	d.State = func() map[string]any { return map[string]any{} }

	handlers := map[string]yaq.Handler{
		"get_channel_names": constant([]any{"image"}),
		"get_channel_shapes": func(context.Context, []any) (any, error) {
			return map[string]any{"image": []any{c.height, c.width}}, nil
		},
		"get_channel_units":    constant(map[string]any{"image": nil}),
		"get_channel_mappings": constant(map[string]any{"image": []any{"x_index", "y_index"}}),
		"get_mapping_id":       constant(2),
		"get_mapping_units":    constant(map[string]any{"x_index": nil, "y_index": nil}),
		"get_mappings": func(context.Context, []any) (any, error) {
			return map[string]any{"x_index": c.index(1, c.width, c.left), "y_index": c.index(c.height, 1, c.top), "mapping_id": 2}, nil
		},
		"measure": func(_ context.Context, p []any) (any, error) {
			loop, _ := p[0].(bool)
			return c.measure(loop), nil
		},
		"stop_looping": func(context.Context, []any) (any, error) {
			c.mu.Lock()
			c.looping = false
			c.mu.Unlock()
			return nil, nil
		},
		"get_measured": func(context.Context, []any) (any, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.measured, nil
		},
		"get_measurement_id": func(context.Context, []any) (any, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.measurementID, nil
		},
	}
	for method, h := range handlers {
		if err := d.Handle(method, h); err != nil {
			return err
		}
	}
	if loop, _ := cfg["loop_at_startup"].(bool); loop {
		c.measure(true)
	}
	return nil
}

func constant(v any) yaq.Handler {
	return func(context.Context, []any) (any, error) { return v, nil }
}

// index is a mapping: pixel indices from start along one axis, as an <i2
// array of the given shape.
func (c *camera) index(rows, cols, start int) *ndarray.Array {
	v := make([]int16, rows*cols)
	for i := range v {
		v[i] = int16(start + i)
	}
	a, _ := ndarray.FromSlice(v, rows, cols)
	a, _ = a.ToOrder(ndarray.LittleEndian)
	return a
}

// measure starts a measurement unless one runs, and returns the id of the
// one running now.
func (c *camera) measure(loop bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.looping = loop
	if !c.busy {
		c.busy = true
		go c.run()
	}
	return c.measurementID + 1
}

func (c *camera) run() {
	for {
		time.Sleep(c.exposure)
		img := c.image()
		c.mu.Lock()
		c.measurementID++
		c.measured = map[string]any{"image": img, "measurement_id": c.measurementID, "mapping_id": 2}
		if !c.looping {
			c.busy = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// image is a frame of shot noise over a smooth background.
func (c *camera) image() *ndarray.Array {
	c.mu.Lock()
	v := make([]int16, c.width*c.height)
	for i := range v {
		x, y := i%c.width, i/c.width
		v[i] = int16(100 + (x+y)%64 + c.rng.IntN(16))
	}
	c.mu.Unlock()
	a, _ := ndarray.FromSlice(v, c.height, c.width)
	a, _ = a.ToOrder(ndarray.LittleEndian)
	return a
}
