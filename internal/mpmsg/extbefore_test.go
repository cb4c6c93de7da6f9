package mpmsg

import "testing"

// extBefore recognises every ext header form just before a payload.
func TestExtBefore(t *testing.T) {
	for _, c := range []struct {
		head []byte
		n    int
	}{
		{[]byte{0xd4, 110}, 1},
		{[]byte{0xd8, 110}, 16},
		{[]byte{0xc7, 200, 110}, 200},
		{[]byte{0xc8, 1, 0, 110}, 256},
		{[]byte{0xc9, 0, 1, 0, 0, 110}, 65536},
	} {
		b := append([]byte{0x91}, c.head...)
		if !extBefore(b, c.n) {
			t.Errorf("% x: no header of %d", c.head, c.n)
		}
		if extBefore(b, c.n+1) {
			t.Errorf("% x: a header of %d", c.head, c.n+1)
		}
	}
	if extBefore([]byte{0x91, 0x92}, 1) || extBefore(nil, 0) {
		t.Error("a header where there is none")
	}
}
