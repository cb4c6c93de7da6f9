package ndarray

import (
	"runtime"
	"sync"
	"weak"
)

// internTable is a cache, not state: it maps the canonical key of each
// record or subarray layout alive in the program to that layout, so that
// building the same layout twice yields the same pointer and DTypes
// compare with ==. Entries are weak: a layout no DType holds any more is
// collected and its entry removed, so the table never outgrows the
// layouts in use (a fuzzer or a stream of hostile headers cannot fill it).
var internTable = struct {
	sync.Mutex
	m map[string]weak.Pointer[layout]
}{m: map[string]weak.Pointer[layout]{}}

// intern returns the live layout with l's key, or l after recording it.
func intern(l *layout) *layout {
	internTable.Lock()
	defer internTable.Unlock()
	if wp, ok := internTable.m[l.key]; ok {
		if p := wp.Value(); p != nil {
			return p
		}
	}
	internTable.m[l.key] = weak.Make(l)
	runtime.AddCleanup(l, forget, l.key)
	return l
}

// forget removes a collected layout's entry, unless a new layout with the
// same key has taken its place meanwhile.
func forget(key string) {
	internTable.Lock()
	defer internTable.Unlock()
	if wp, ok := internTable.m[key]; ok && wp.Value() == nil {
		delete(internTable.m, key)
	}
}
