package main

import (
	"context"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaqrpc"
)

// The channels of the simulated sensor, with their dtypes and shapes.
const (
	imageRows, imageCols = 480, 640
	spectrumLen          = 1024
)

// sensor simulates a yaq is-sensor daemon with has-measure-trigger, as
// yaqd-core's IsSensor and HasMeasureTrigger behave: measure starts a
// measurement unless one is running and returns the id the running one will
// have; busy stays true until it has finished; get_measured returns the
// last one finished, with its measurement_id.
type sensor struct {
	name     string
	duration time.Duration // how long a measurement takes

	mu            sync.Mutex
	busy, looping bool
	measurementID int // of the last measurement finished; 0 before any
	measured      map[string]any
}

func newSensor(name string, duration time.Duration) *sensor {
	return &sensor{name: name, duration: duration, measured: map[string]any{"measurement_id": 0}}
}

// The channels, as get_channel_names, _units and _shapes report them.
var (
	channelNames  = []string{"image", "spectrum"}
	channelUnits  = map[string]any{"image": "counts", "spectrum": "V"}
	channelShapes = map[string]any{"image": []int{imageRows, imageCols}, "spectrum": []int{spectrumLen}}
)

// methods documents each method, for help.
var methods = map[string]string{
	"id":                 "id() -> {name, kind}: the daemon's name and kind",
	"help":               "help(method=None): the methods' names, or one method's description",
	"measure":            "measure(loop=False) -> int: start a measurement unless one is running; its measurement_id",
	"stop_looping":       "stop_looping(): end looping after the running measurement",
	"busy":               "busy() -> bool: whether a measurement is running",
	"get_measured":       "get_measured() -> map: the last finished measurement's channels and measurement_id",
	"get_measurement_id": "get_measurement_id() -> int: the id of the last finished measurement",
	"get_channel_names":  "get_channel_names() -> [str]: the channels",
	"get_channel_units":  "get_channel_units() -> {str: str}: each channel's unit",
	"get_channel_shapes": "get_channel_shapes() -> {str: [int]}: each channel's shape",
	"shutdown":           "shutdown(): stop the daemon",
}

// register adds the sensor's methods to srv; shutdown is called by the
// shutdown method.
func (s *sensor) register(srv *yaqrpc.Server, shutdown func()) {
	constant := func(v any) yaqrpc.Handler {
		return func(context.Context, *yaqrpc.Request) (any, error) { return v, nil }
	}
	locked := func(f func() any) yaqrpc.Handler {
		return func(context.Context, *yaqrpc.Request) (any, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return f(), nil
		}
	}
	srv.Handle("id", constant(map[string]any{"name": s.name, "kind": "fakesensor"}))
	srv.Handle("get_channel_names", constant(channelNames))
	srv.Handle("get_channel_units", constant(channelUnits))
	srv.Handle("get_channel_shapes", constant(channelShapes))
	srv.Handle("help", func(_ context.Context, r *yaqrpc.Request) (any, error) {
		if _, given := r.Param(0, "method"); !given {
			return slices.Sorted(maps.Keys(methods)), nil
		}
		name, err := yaqrpc.ParamAs[string](r, 0, "method")
		if err != nil {
			return nil, err
		}
		doc, ok := methods[name]
		if !ok {
			return nil, yaqrpc.Errorf(yaqrpc.CodeInvalidParams, "no method %q", name)
		}
		return doc, nil
	})
	srv.Handle("measure", func(_ context.Context, r *yaqrpc.Request) (any, error) {
		loop := false
		if _, given := r.Param(0, "loop"); given {
			var err error
			if loop, err = yaqrpc.ParamAs[bool](r, 0, "loop"); err != nil {
				return nil, err
			}
		}
		return s.measure(loop), nil
	})
	srv.Handle("stop_looping", locked(func() any { s.looping = false; return nil }))
	srv.Handle("busy", locked(func() any { return s.busy }))
	srv.Handle("get_measured", locked(func() any { return s.measured }))
	srv.Handle("get_measurement_id", locked(func() any { return s.measurementID }))
	srv.Handle("shutdown", func(context.Context, *yaqrpc.Request) (any, error) {
		go shutdown() // graceful: returns once this answer is sent
		return nil, nil
	})
}

// measure starts a measurement unless one is running, and returns the id
// of the one running now.
func (s *sensor) measure(loop bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.looping = loop
	if !s.busy {
		s.busy = true
		go s.run()
	}
	return s.measurementID + 1
}

// run measures, again and again while looping.
func (s *sensor) run() {
	for {
		time.Sleep(s.duration)
		s.mu.Lock()
		id := s.measurementID + 1
		s.mu.Unlock()
		m := simulate(id)
		s.mu.Lock()
		s.measured, s.measurementID = m, id
		if !s.looping {
			s.busy = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// simulate makes the channels of measurement id: a little-endian uint16
// image and a float64 spectrum, both depending on id so that measurements
// differ.
func simulate(id int) map[string]any {
	img := make([]uint16, imageRows*imageCols)
	for i := range img {
		r, c := i/imageCols, i%imageCols
		img[i] = uint16((r*7 + c*3 + id*11) % 4096)
	}
	spec := make([]float64, spectrumLen)
	for i := range spec {
		x := float64(i-spectrumLen/2) / 40
		spec[i] = math.Exp(-x*x) + 0.001*float64(id)
	}
	image, _ := ndarray.View(img, imageRows, imageCols) // new slices each call: no copy
	spectrum, _ := ndarray.View(spec)
	// The channels are documented as little-endian ("<u2", "<f8").
	image, _ = image.ToOrder('<')
	spectrum, _ = spectrum.ToOrder('<')
	return map[string]any{"measurement_id": id, "image": image, "spectrum": spectrum}
}
