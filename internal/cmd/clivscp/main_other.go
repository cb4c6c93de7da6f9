//go:build !linux

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "clivscp: measures on Linux only (sync, peak RSS)")
	os.Exit(1)
}
