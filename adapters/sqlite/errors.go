package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	driver "modernc.org/sqlite" // also registers the "sqlite" driver
	sqlitelib "modernc.org/sqlite/lib"

	"github.com/plantstore/plantstore/application"
)

// rowError is a fault confined to one create (a row refused by a constraint,
// a stored row that breaks the plant rules); the rest of its batch commits.
type rowError struct{ msg string }

func (e *rowError) Error() string { return e.msg }

func rowFault(err error) bool {
	var re *rowError
	return errors.As(err, &re)
}

// edgeError turns a driver error into one this package may return: context
// errors pass through; a busy, locked, full, unreadable or closed database
// becomes application.ErrUnavailable; a constraint failure becomes a row
// fault; anything else a plain fault. Only the driver's message survives,
// never its types.
func edgeError(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("sqlite: %s: %v: %w", op, err, application.ErrUnavailable)
	}
	var de *driver.Error
	if !errors.As(err, &de) {
		return fmt.Errorf("sqlite: %s: %v", op, err)
	}
	switch de.Code() & 0xff { // the primary code; extended codes add detail above it
	case sqlitelib.SQLITE_BUSY, sqlitelib.SQLITE_LOCKED, sqlitelib.SQLITE_NOMEM,
		sqlitelib.SQLITE_READONLY, sqlitelib.SQLITE_INTERRUPT, sqlitelib.SQLITE_IOERR,
		sqlitelib.SQLITE_FULL, sqlitelib.SQLITE_CANTOPEN, sqlitelib.SQLITE_PROTOCOL,
		sqlitelib.SQLITE_NOLFS:
		return fmt.Errorf("sqlite: %s: %v: %w", op, err, application.ErrUnavailable)
	case sqlitelib.SQLITE_CONSTRAINT:
		return &rowError{msg: fmt.Sprintf("sqlite: %s: %v", op, err)}
	default:
		return fmt.Errorf("sqlite: %s: %v", op, err)
	}
}
