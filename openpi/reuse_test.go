package openpi

import (
	"runtime"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// robotObservation is the observation of the benchmarks: three
// 224x224x3 uint8 images and a 32-float state.
func robotObservation(t testing.TB) map[string]any {
	obs := map[string]any{"prompt": "fold the towel"}
	for _, name := range []string{"base_0_rgb", "left_wrist_0_rgb", "right_wrist_0_rgb"} {
		img := make([]uint8, 224*224*3)
		for i := range img {
			img[i] = uint8(i)
		}
		obs["image/"+name] = mustArray(t, img, 224, 224, 3)
	}
	obs["state"] = mustArray(t, make([]float32, 32), 32)
	return obs
}

// bytesPerCall returns the bytes allocated (by the client and the
// in-process server together) per call of infer, after a warm-up.
func bytesPerCall(t *testing.T, infer func()) uint64 {
	for range 3 {
		infer()
	}
	const runs = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		infer()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// TestInferReusingAllocs: a control loop on InferReusing allocates nothing
// the size of its messages (about 450 KiB each way), where Infer allocates
// each answer: the test can fail.
func TestInferReusingAllocs(t *testing.T) {
	c := dialT(t, startServer(t, &Server{Policy: Echo}), nil)
	obs := robotObservation(t)
	ctx := ctx10(t)
	payload := uint64(3 * 224 * 224 * 3)
	var buf ResultBuffer
	reusing := bytesPerCall(t, func() {
		action, err := c.InferReusing(ctx, obs, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if !action["state"].(*ndarray.Array).Equal(obs["state"].(*ndarray.Array)) {
			t.Fatal("the echo differs")
		}
	})
	fresh := bytesPerCall(t, func() {
		if _, err := c.Infer(ctx, obs); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("bytes allocated per call: InferReusing %d, Infer %d (message %d)", reusing, fresh, payload)
	if reusing > 32<<10 {
		t.Errorf("InferReusing allocated %d bytes per call, for messages of %d", reusing, payload)
	}
	if fresh < payload {
		t.Errorf("Infer allocated %d bytes per call, less than its answer's %d: the measure is broken", fresh, payload)
	}
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := c.InferReusing(ctx, obs, &buf); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocations per InferReusing (client and server): %.0f", allocs)
}
