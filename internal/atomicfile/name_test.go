package atomicfile

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseTemp(t *testing.T) {
	assert.Equal(t, 42, parseTemp(tempName("x.npy", 42, 1<<64-1)))
	assert.Equal(t, 42, parseTemp(tempName(".x.ndpack-tmp-1-1", 42, 0)))
	for _, n := range []string{"", ".", "..ndpack-tmp-1-1", ".x.ndpack-tmp-1-" + "1000000000000z", ".x.ndpack-tmp--1-a", ".x.ndpack-tmp-+1-a",
		".x.ndpack-tmp-1-a-b", ".x.tmp-1-1", ".budget.xlsx.tmp-2024-12"} {
		assert.Zero(t, parseTemp(n), n)
	}
}

// Whatever name a directory holds, parseTemp accepts only what tempName
// makes.
func FuzzParseTemp(f *testing.F) {
	for _, s := range []string{tempName("a.npy", 1, 0), tempName("x", 4194304, 1<<64-1), ".a.ndpack-tmp-1-", ".a.npy.tmp-3k5jd9", "..ndpack-tmp-1-1", ".a.ndpack-tmp-01-a", ".budget.xlsx.tmp-2024-12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		pid := parseTemp(name)
		if pid == 0 {
			return
		}
		i := strings.LastIndex(name, tempMark)
		n, err := strconv.ParseUint(name[strings.LastIndexByte(name, '-')+1:], 36, 64)
		if err != nil || tempName(name[1:i], pid, n) != name {
			t.Fatalf("parseTemp(%q) = %d, but tempName makes no such name", name, pid)
		}
	})
}
