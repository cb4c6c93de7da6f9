//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package connset

import (
	"net"
	"syscall"
)

// canPeek says that peekSocket asks TCP sockets here.
const canPeek = true

// peekSocket asks the kernel whether conn's receive queue holds bytes or
// the peer's hang-up, with a receive that peeks and does not wait.
func peekSocket(conn net.Conn) socketState {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return socketUnknown
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return socketUnknown
	}
	state := socketUnknown
	var one [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		for rerr == syscall.EINTR {
			n, _, rerr = syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		}
		// Always true: returning false would wait for the socket to
		// become readable, the very wait this avoids.
		switch {
		case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
			state = socketQuiet
		case rerr != nil:
			state = socketClosed // reset, or otherwise unusable
		case n == 0:
			state = socketClosed
		default:
			state = socketReadable
		}
		return true
	})
	if err != nil {
		return socketUnknown
	}
	return state
}
