//go:build linux || darwin || freebsd || netbsd || openbsd

package httpapi

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// socketHolds reports what c's socket holds now, without waiting: bytes of
// an answer, the peer's close, or nothing yet. A read deadline could not
// tell "nothing yet" from "not read in time" on a busy machine: a deadline
// past before the read begins fails the read whatever the socket holds.
func socketHolds(t *testing.T, c net.Conn) socketState {
	t.Helper()
	raw, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatalf("socket of %v: %v", c.LocalAddr(), err)
	}
	state := socketEmpty
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(err, syscall.EAGAIN):
		case err != nil: // reset
			state = socketClosed
		case n == 0:
			state = socketClosed
		default:
			state = socketHasBytes
		}
		return true // never wait for readiness
	})
	if err != nil {
		t.Fatalf("peek at %v: %v", c.LocalAddr(), err)
	}
	return state
}
