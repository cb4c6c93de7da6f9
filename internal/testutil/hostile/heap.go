package hostile

import (
	"runtime"
	"strings"
)

// HeapCost runs f and returns the bytes allocated meanwhile and how much
// the heap in use grew: what a hostile input made a decoder spend.
func HeapCost(f func()) (allocated, grew uint64) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	if after.HeapInuse > before.HeapInuse {
		grew = after.HeapInuse - before.HeapInuse
	}
	return after.TotalAlloc - before.TotalAlloc, grew
}

// HugeProtocol is an Avro protocol's JSON of about size bytes, nearly all
// "[],": the densest JSON in values, which a peer may serve as its
// protocol.
func HugeProtocol(size int) string {
	return `{"protocol": "evil", "messages": {}, "x": [` + strings.Repeat("[],", size/3) + `[]]}`
}
