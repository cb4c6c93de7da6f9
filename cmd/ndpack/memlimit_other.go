//go:build !linux

package main

// usableMemory is the memory this process may use, where the system does
// not say: 8 GiB.
func usableMemory() int64 { return 8 << 30 }
