package render

import "testing"

// The branch-free Paeth predictor is the specification's for every a, b, c.
func TestPaethPredictIsTheSpecifications(t *testing.T) {
	spec := func(a, b, c int) int {
		p := a + b - c
		pa, pb, pc := abs(p-a), abs(p-b), abs(p-c)
		if pa <= pb && pa <= pc {
			return a
		}
		if pb <= pc {
			return b
		}
		return c
	}
	for a := range 256 {
		for b := range 256 {
			for c := range 256 {
				if got, want := paethPredict(byte(a), byte(b), byte(c)), spec(a, b, c); int(got) != want {
					t.Fatalf("paethPredict(%d, %d, %d) = %d, want %d", a, b, c, got, want)
				}
			}
		}
	}
}
