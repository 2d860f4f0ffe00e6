package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/plantstore/plantstore/application"
)

// kind is what an error from the driver means to the store.
type kind int

const (
	// fault: a bug, a broken schema, anything a retry will not fix.
	fault kind = iota
	// unavailable: the database cannot be reached or refuses to work now.
	unavailable
	// rowData: the database refused the data of one row (a CHECK, a bad
	// value); in a batch, its neighbours deserve another try without it.
	rowData
	// transient: a race the same statement wins when run again (a unique
	// violation despite ON CONFLICT, a serialization failure, a deadlock).
	transient
	// canceled: the caller gave up.
	canceled
)

// classify sorts an error from database/sql, lib/pq or the network.
func classify(err error) kind {
	switch {
	case errors.Is(err, context.Canceled):
		return canceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, errUnconfirmed):
		return unavailable
	}
	if pqErr := pq.As(err); pqErr != nil {
		return classifyCode(pqErr)
	}
	var netErr net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn),
		errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE),
		errors.As(err, &netErr):
		return unavailable
	}
	// lib/pq's words when no host of the URL is the primary that
	// target_session_attrs=read-write asks for: a failover under way.
	for _, msg := range noPrimary {
		if strings.Contains(err.Error(), msg) {
			return unavailable
		}
	}
	return fault
}

// noPrimary are what lib/pq says when it found no host to write to.
var noPrimary = []string{"could not connect to any of the hosts", "session is read-only", "server is in hot standby mode"}

func classifyCode(e *pq.Error) kind {
	switch e.Code {
	case pqerror.UniqueViolation, pqerror.TRSerializationFailure, pqerror.TRDeadlockDetected:
		return transient
	case pqerror.ReadOnlySQLTransaction:
		// The primary became a standby: a failover is under way.
		return unavailable
	}
	switch e.Code.Class() {
	case pqerror.ClassConnectionException, pqerror.ClassInsufficientResources,
		pqerror.ClassOperatorIntervention:
		// Lost connections, too many connections or a full disk, and the
		// administrator's shutdowns and cancellations (a server-side
		// statement_timeout among them).
		return unavailable
	case pqerror.ClassDataException, pqerror.ClassIntegrityConstraintViolation:
		return rowData
	}
	// A FATAL error ends the session: the server refused this connection
	// (not accepting connections, authentication, a dropped database).
	if e.Fatal() || e.Severity == pqerror.SeverityPanic {
		return unavailable
	}
	return fault
}

// reason is a short, driver-free phrase for an unavailable store, safe to
// return to callers.
func reason(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, errUnconfirmed):
		return "the commit was not confirmed by the standby; it may or may not have been stored"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "host not found"
	}
	for _, msg := range noPrimary {
		if strings.Contains(err.Error(), msg) {
			return "no primary reachable"
		}
	}
	if pqErr := pq.As(err); pqErr != nil {
		switch pqErr.Code {
		case pqerror.TooManyConnections:
			return "too many connections"
		case pqerror.AdminShutdown, pqerror.CrashShutdown, pqerror.CannotConnectNow:
			return "the database is shutting down or starting up"
		case pqerror.ReadOnlySQLTransaction:
			return "the database is read-only"
		case pqerror.QueryCanceled:
			return "timed out"
		}
		if pqErr.Fatal() {
			return "the database refused the connection"
		}
	}
	return "connection lost"
}

// fail turns err into what the store returns, logging the detail it keeps
// from the caller. op names what failed, for the log.
func (s *Store) fail(op string, err error) error {
	s.noteReadOnly(err)
	switch classify(err) {
	case canceled:
		return fmt.Errorf("store: %s: %w", op, context.Canceled)
	case unavailable:
		s.log.Warn("store unavailable", "op", op, "err", err)
		return fmt.Errorf("store: %w (%s)", application.ErrUnavailable, reason(err))
	default:
		s.log.Error("store fault", "op", op, "err", err)
		return fmt.Errorf("store: %s failed%s", op, sqlState(err))
	}
}

// sqlState names the SQLSTATE of err, if it has one: enough for an operator
// to search the logs, nothing a client could learn the schema from.
func sqlState(err error) string {
	if pqErr := pq.As(err); pqErr != nil {
		return " (SQLSTATE " + string(pqErr.Code) + ")"
	}
	return ""
}
