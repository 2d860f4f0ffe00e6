//go:build !linux

package postgres

import (
	"syscall"
	"time"
)

// userTimeout sets nothing where TCP_USER_TIMEOUT is Linux's alone: the
// keepalive probes still end a connection whose peer is gone.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
