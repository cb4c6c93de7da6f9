package main

import "testing"

// A dtype typed on a command line never panics the parser, and what it
// accepts is a valid dtype.
func FuzzDTypeFlag(f *testing.F) {
	for _, s := range []string{"float64", ">i2", "x:<f4,y:<f4,id:<u2", "pos:f4(3)", "[('a', [('b', '<i2')]), ('d', '<f8', (2, 2))]", "M8[ns]", "U5", "(", "[(", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dt, err := parseDTypeFlag(s)
		if err == nil {
			if verr := dt.Validate(); verr != nil {
				t.Fatalf("%q gave an invalid dtype: %v", s, verr)
			}
		}
	})
}
