package codecerr

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(1, "item"), "1 item"},
		{Count(0, "item"), "0 items"},
		{Count(2, "entry"), "2 entries"},
		{Count(1, "entry"), "1 entry"},
		{Count(int64(3), "key"), "3 keys"},
		{Count(uint64(1<<64-1), "byte"), "18446744073709551615 bytes"},
		{Count(-1, "element"), "-1 elements"},
		{Count(5, "dimension"), "5 dimensions"},
		{Count(2, "match"), "2 matches"},
		{Count(1, "parameter"), "1 parameter"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestRemain(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Remain(1, "byte"), "1 byte remains"},
		{Remain(0, "byte"), "0 bytes remain"},
		{Remain(1, ""), "1 remains"},
		{Remain(7, ""), "7 remain"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
