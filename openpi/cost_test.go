package openpi

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
)

// costMessages are messages of one kind of value each, about n of them:
// what their decoding allocates per byte is the most a peer can make it
// take.
func costMessages(t testing.TB, n int) map[string][]byte {
	list := func(n int, elem []byte) []byte {
		b := mpwire.AppendArrayHeader([]byte{0x81, 0xa1, 'a'}, n)
		return append(b, bytes.Repeat(elem, n)...)
	}
	dict := func(n int, value []byte) []byte {
		b := mpwire.AppendMapHeader(nil, n)
		for i := range n {
			b = mpwire.AppendString(b, fmt.Sprintf("k%d", i))
			b = append(b, value...)
		}
		return b
	}
	obs, err := appendMessage(nil, robotObservation(t), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	arrays := map[string]any{}
	for i := range n / 50 {
		arrays[fmt.Sprint(i)] = mustArray(t, []float32{1, 2}, 2, 1)
	}
	many, err := appendMessage(nil, arrays, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		"empty lists":       list(n, []byte{0x90}),
		"empty maps":        list(n, []byte{0x80}),
		"one-entry maps":    list(n, []byte{0x81, 0xa0, 0xc0}),
		"small ints":        list(n, []byte{0x05}),
		"negative ints":     list(n, []byte{0xff}),
		"wide ints":         list(n, []byte{0xcd, 0x10, 0x00}),
		"floats":            list(n, []byte{0xcb, 1, 2, 3, 4, 5, 6, 7, 8}),
		"short strings":     list(n, []byte{0xa1, 'x'}),
		"empty bins":        list(n, []byte{0xc4, 0}),
		"a map of 100,000":  dict(n, []byte{0xc0}),
		"maps of 9":         list(n/10, dict(9, []byte{0x01})),
		"strings of 40":     list(n/10, append([]byte{0xa0 | 31}, strings.Repeat("y", 31)...)),
		"small arrays":      many,
		"robot observation": obs,
	}
}

// TestDecodeCost: what checkMessage charges for a message is what
// decoding it allocates, within -20% and +150%, so that the memory budget
// and the expansion bound count what the heap holds; and no message a
// peer can send takes more than maxExpansion times its size.
func TestDecodeCost(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what is allocated")
	}
	for name, msg := range costMessages(t, 100000) {
		cost, err := checkMessage(msg)
		expensive := err != nil
		var allocated uint64
		if expensive {
			// Refused: measure what it would have cost, unbounded.
			if cost, err = arrays.Cost(msg, 1<<62); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		allocated, _ = hostile.HeapCost(func() {
			if _, err := decodeChecked(msg); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		})
		t.Logf("%-20s %8d bytes: charged %9d (%5.2f/byte), allocated %9d (%5.2f/byte), refused %v",
			name, len(msg), cost, float64(cost)/float64(len(msg)), allocated, float64(allocated)/float64(len(msg)), expensive)
		if float64(cost) < 0.8*float64(allocated) || float64(cost) > 2.5*float64(allocated)+4096 {
			t.Errorf("%s: charged %d bytes for %d allocated", name, cost, allocated)
		}
		if expensive != (cost > maxExpansion*int64(len(msg))+expansionSlack) {
			t.Errorf("%s: refused %v at a cost of %d for %d bytes", name, expensive, cost, len(msg))
		}
	}
}
