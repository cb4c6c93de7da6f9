// Command clivscp measures what the README's performance section says of
// the CLI's file-to-file conversion: a .npy of -size MiB converted to ext
// 110 and back by `ndpack convert`, each conversion timed in turn with
// `cp` of the same input, the dirty pages written out (sync) before each
// run, over -rounds rounds. It prints, for each direction, the best
// times' ratio and the median and range of the per-round ratios (the
// speed relative to cp: above 1 is faster), and the conversion's peak
// RSS (measured by GNU time). Each round's times go to standard error as
// they are measured.
//
// Usage, from the module's root (Linux, with GNU time at /usr/bin/time;
// it builds the CLI into -dir and needs four times -size free there):
//
//	go run ./internal/cmd/clivscp [-size 512] [-rounds 9] [-dir DIR]
package main
