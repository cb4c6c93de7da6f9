package connset

import (
	"net"
	"syscall"
	"unsafe"
)

// sendQueue asks the kernel how much of a TCP connection's send queue the
// peer has yet to acknowledge (ioctl SIOCOUTQ), which tells a peer that
// has stopped reading from one whose data the kernel is still buffering.
type sendQueue struct {
	rc     syscall.RawConn
	ask    func(fd uintptr) // made once: a closure per call would allocate
	n      int32
	errno  syscall.Errno
	cannot bool
}

// unsent returns the bytes written to nc that its peer has not yet
// acknowledged, or false if nc cannot say.
func (q *sendQueue) unsent(nc net.Conn) (int, bool) {
	if q.cannot {
		return 0, false
	}
	if q.rc == nil {
		tc, ok := nc.(*net.TCPConn)
		if !ok {
			q.cannot = true
			return 0, false
		}
		rc, err := tc.SyscallConn()
		if err != nil {
			q.cannot = true
			return 0, false
		}
		q.rc = rc
		q.ask = func(fd uintptr) {
			_, _, q.errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCOUTQ, uintptr(unsafe.Pointer(&q.n)))
		}
	}
	if err := q.rc.Control(q.ask); err != nil || q.errno != 0 {
		q.cannot = true
		return 0, false
	}
	return int(q.n), true
}
