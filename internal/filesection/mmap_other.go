//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filesection

import (
	"errors"
	"os"
)

const canMap = false

var pageSize int64 = 4096

func mapRange(*os.File, int64, int) ([]byte, error) { return nil, errors.New("mmap is not available") }

func unmap([]byte) {}
