//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package connset

import "net"

// canPeek says that peekSocket cannot ask sockets here.
const canPeek = false

// peekSocket cannot ask this system's sockets without waiting.
func peekSocket(net.Conn) socketState { return socketUnknown }
