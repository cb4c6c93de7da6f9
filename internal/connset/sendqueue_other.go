//go:build !linux

package connset

import "net"

// sendQueue would say how much of a connection's send queue the peer has
// yet to acknowledge; here the kernel is not asked.
type sendQueue struct {
	cannot bool // as on Linux, for tests; here it is always so
}

// unsent returns false: the kernel is not asked.
func (*sendQueue) unsent(net.Conn) (int, bool) { return 0, false }
