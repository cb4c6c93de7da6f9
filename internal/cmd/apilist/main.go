// Command apilist prints the module's exported API as api/v1.txt holds it:
//
//	go run ./internal/cmd/apilist > api/v1.txt
//
// Run it from the module's root after a deliberate change to the public
// API, and commit the new listing with the change.
package main

import (
	"fmt"
	"os"

	"github.com/ndpack/ndpack/internal/apilist"
)

func main() {
	l, err := apilist.List(".", "github.com/ndpack/ndpack")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apilist:", err)
		os.Exit(1)
	}
	fmt.Printf("# The exported API of github.com/ndpack/ndpack: %d names.\n", l.Names)
	fmt.Println("# Regenerate with: go run ./internal/cmd/apilist > api/v1.txt")
	for _, line := range l.Lines {
		fmt.Println(line)
	}
}
