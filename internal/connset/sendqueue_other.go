//go:build !linux

package connset

import "net"

// sendQueue would say how much of a connection's send queue the peer has
// yet to acknowledge; here the kernel is not asked.
type sendQueue struct{}

// unsent returns false: the kernel is not asked.
func (*sendQueue) unsent(net.Conn) (int, bool) { return 0, false }
