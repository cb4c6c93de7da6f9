package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// usableMemory is the memory this process may use: the machine's, or less
// where an address-space or data limit (ulimit -v, -d) or the cgroup's
// memory.max says so.
func usableMemory() int64 {
	var si syscall.Sysinfo_t
	mem := int64(8 << 30)
	if syscall.Sysinfo(&si) == nil && si.Totalram > 0 {
		mem = int64(si.Totalram) * int64(si.Unit)
	}
	for _, res := range []int{syscall.RLIMIT_AS, syscall.RLIMIT_DATA} {
		var lim syscall.Rlimit
		if syscall.Getrlimit(res, &lim) == nil && lim.Cur < uint64(mem) {
			mem = int64(lim.Cur)
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && n < mem {
			mem = n
		}
	}
	return mem
}
