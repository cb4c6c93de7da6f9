package mpwalk

import "testing"

// Len is called for every small message an RPC peer reads: it allocates
// nothing.
func TestLenAllocatesNothing(t *testing.T) {
	b := []byte{0x93, 1, 2, 0xa3, 'a', 'b', 'c'}
	n := testing.AllocsPerRun(100, func() { Len(b, Limits{MaxDepth: 512, MaxExpansion: 48}) })
	if n != 0 {
		t.Fatalf("Len allocated %v times", n)
	}
}
