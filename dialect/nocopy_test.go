package dialect

import (
	"testing"
	"unsafe"

	"github.com/ndpack/ndpack/ndarray"
)

// UnmarshalNoCopy aliases the input only where the data lies aligned for
// its items, and copies it once, aligned, elsewhere: Values then reads it
// in place either way.
func TestNoCopyAliasesOnlyAlignedData(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i)
	}
	a, _ := ndarray.FromSlice(v)
	for _, d := range []Dialect{MsgpackNumpy, OpenPI} {
		msg, err := d.Append(nil, a)
		if err != nil {
			t.Fatal(err)
		}
		h, err := DecodeHeader(msg)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg)+8)
		aliased := 0
		for shift := 0; shift < 8; shift++ {
			in := buf[shift : shift+len(msg)]
			copy(in, msg)
			got, _, err := UnmarshalNoCopy(in)
			if err != nil {
				t.Fatal(err)
			}
			there := &in[h.DataOffset]
			alias := &got.Data[0] == there
			if aligned := uintptr(unsafe.Pointer(there))%8 == 0; alias != aligned {
				t.Errorf("%s: data at address %% 8 = %d: aliases the input %v", d, uintptr(unsafe.Pointer(there))%8, alias)
			}
			if alias {
				aliased++
			}
			vals, err := ndarray.Values[float64](got)
			if err != nil || &vals[0] != (*float64)(unsafe.Pointer(&got.Data[0])) || vals[999] != 999 {
				t.Errorf("%s, shift %d: Values copied or differs (%v)", d, shift, err)
			}
		}
		if aliased != 1 {
			t.Errorf("%s: %d of 8 shifts aliased the input, want 1", d, aliased)
		}
	}
}
