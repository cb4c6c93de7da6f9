package main

import (
	"fmt"
	"io"
	"math"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
)

// runDemo builds a small float64 array, encodes it as an ext 110 object,
// decodes the bytes and checks that the same array comes back.
func runDemo(args []string, out io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: demo takes no arguments", errUsage)
	}
	values := make([]float64, 12)
	for i := range values {
		values[i] = math.Sin(float64(i) / 2)
	}
	a, err := ndarray.FromSlice(values, 3, 4)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "array:   %s, %d elements, %d data bytes\n", a, a.Len(), len(a.Data))
	printRows(out, values, 4)

	blob, err := ext110.Marshal(a)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "ext 110: %d bytes (%d of framing): % x ...\n", len(blob), len(blob)-len(a.Data), blob[:12])

	back, err := ext110.Unmarshal(blob)
	if err != nil {
		return err
	}
	got, err := ndarray.Values[float64](back)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "decoded: %s\n", back)
	printRows(out, got, 4)
	if !back.Equal(a) {
		return fmt.Errorf("demo: the decoded array differs from the original")
	}
	fmt.Fprintln(out, "round trip: identical dtype, shape and bytes")
	return nil
}

func printRows(out io.Writer, v []float64, width int) {
	for i := 0; i < len(v); i += width {
		fmt.Fprintf(out, "  %8.4f\n", v[i:min(i+width, len(v))])
	}
}
