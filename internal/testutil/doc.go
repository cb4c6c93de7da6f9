// Package testutil holds, in its subpackages, what only the tests use:
// benchbase (the raw TCP baselines benchmarks are measured against),
// frames (camera stacks with Gaussian noise and random floats, for the
// compression tests), hostile (hostile inputs and peers every entry point
// is tried with), pypeer (running the Python reference peers) and
// sharedfiles (reading ../shared). Nothing the module's product code runs lives here.
package testutil
