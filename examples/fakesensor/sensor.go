package main

import (
	"context"
	"math"
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

// sensor simulates a yaq is-sensor daemon: measure starts a measurement in
// the background, get_measured returns the last one finished.
type sensor struct {
	name     string
	duration time.Duration // how long a measurement takes

	mu       sync.Mutex
	busy     bool
	next     int
	measured map[string]any
}

func newSensor(name string, duration time.Duration) *sensor {
	s := &sensor{name: name, duration: duration}
	s.measured = map[string]any{"measurement_id": -1}
	return s
}

// register adds the sensor's methods to srv; shutdown is called by the
// shutdown method.
func (s *sensor) register(srv *yaqrpc.Server, shutdown func()) {
	srv.Handle("id", func(context.Context, *yaqrpc.Request) (any, error) {
		return map[string]any{"name": s.name, "kind": "fakesensor"}, nil
	})
	srv.Handle("measure", func(context.Context, *yaqrpc.Request) (any, error) { return s.measure(), nil })
	srv.Handle("get_measured", func(context.Context, *yaqrpc.Request) (any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.measured, nil
	})
	srv.Handle("get_channel_shapes", func(context.Context, *yaqrpc.Request) (any, error) {
		return map[string]any{"image": []int{imageRows, imageCols}, "spectrum": []int{spectrumLen}}, nil
	})
	srv.Handle("busy", func(context.Context, *yaqrpc.Request) (any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.busy, nil
	})
	srv.Handle("shutdown", func(context.Context, *yaqrpc.Request) (any, error) {
		go shutdown() // after the answer is sent
		return nil, nil
	})
}

// measure starts a measurement and returns its id.
func (s *sensor) measure() int {
	s.mu.Lock()
	id := s.next
	s.next++
	s.busy = true
	s.mu.Unlock()
	go func() {
		time.Sleep(s.duration)
		m := simulate(id)
		s.mu.Lock()
		s.measured, s.busy = m, false
		s.mu.Unlock()
	}()
	return id
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
	image, _ := ndarray.FromSlice(img, imageRows, imageCols)
	spectrum, _ := ndarray.FromSlice(spec)
	// The channels are documented as little-endian ("<u2", "<f8").
	image, _ = image.ToOrder(ndarray.LittleEndian)
	spectrum, _ = spectrum.ToOrder(ndarray.LittleEndian)
	return map[string]any{"measurement_id": id, "image": image, "spectrum": spectrum}
}
