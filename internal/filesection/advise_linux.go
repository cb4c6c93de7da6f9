package filesection

import "syscall"

// adviseSequential tells the kernel a mapping is read front to back, so it
// reads ahead.
func adviseSequential(m []byte) { syscall.Madvise(m, syscall.MADV_SEQUENTIAL) }
