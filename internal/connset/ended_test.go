package connset

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

// Connections that end as connections do (the peer hung up, reset or left
// while being answered; the server closed it; it idled out) are not
// errors to log; anything else is.
func TestEndedSortsRoutineHangUps(t *testing.T) {
	var logged []string
	s := New(func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) })
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	for _, err := range []error{
		io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
		&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)},
		&net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)},
	} {
		if got := s.Ended(a, err); got != nil {
			t.Errorf("Ended(%v) = %v, want nil: a routine hang-up", err, got)
		}
	}
	other := errors.New("malformed frame")
	if got := s.Ended(a, other); got != other {
		t.Errorf("Ended(%v) = %v, want it back to be logged", other, got)
	}
	if len(logged) != 0 {
		t.Errorf("logged %q", logged)
	}
}
