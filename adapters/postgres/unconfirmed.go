package postgres

import (
	"errors"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// A commit that waits for a synchronous standby can be cut short: the
// caller's cancel request, the deadline, an administrator's shutdown. The
// transaction is then already committed on the primary but may be missing
// from the standby, and PostgreSQL says so only in a warning sent with the
// commit's success ("canceling wait for synchronous replication ... The
// transaction has already committed locally, but might not have been
// replicated to the standby"). A failover to that standby would lose it, so
// the store treats such a commit as of unknown outcome: never acknowledged,
// answered as unavailable (503), as failover tools treat it.

// errUnconfirmed marks a statement whose commit came with such a warning.
var errUnconfirmed = errors.New("commit not confirmed by the synchronous standby")

// unconfirmedError is a call whose commit came with warning; err is what
// the call itself returned, nil when it reported success.
type unconfirmedError struct {
	warning *pq.Error
	err     error
}

func (e *unconfirmedError) Error() string {
	msg := errUnconfirmed.Error() + ": " + e.warning.Message
	if e.err != nil {
		msg += "; then: " + e.err.Error()
	}
	return msg
}

// Unwrap matches errUnconfirmed only: in particular never driver.ErrBadConn,
// which would make database/sql run the statement again on another session.
func (e *unconfirmedError) Unwrap() error { return errUnconfirmed }

// unconfirming reports whether a notice the server sent during a call makes
// the call's commit unconfirmed: a warning (SQLSTATE class 01, which the
// cancelled wait for the standby carries) or an operator's intervention
// (class 57, which carries the wait cut short by a shutdown). The store's
// statements raise no warning of their own, and the codes, unlike the
// messages, are not translated.
func unconfirming(e *pq.Error) bool {
	switch e.Code.Class() {
	case pqerror.ClassWarning, pqerror.ClassOperatorIntervention:
		return true
	}
	return false
}
