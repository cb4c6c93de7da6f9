//go:build !linux

package filesection

func adviseSequential([]byte) {}
