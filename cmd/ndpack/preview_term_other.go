//go:build !(linux || darwin)

package main

import "os"

// terminalColumns returns 0: the width of a terminal is not asked for
// here, and COLUMNS or --width say it.
func terminalColumns(*os.File) int { return 0 }
