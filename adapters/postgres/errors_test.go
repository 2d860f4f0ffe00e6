package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/application"
)

func TestClassify(t *testing.T) {
	pqErr := func(code, severity string) error {
		return fmt.Errorf("wrapped: %w", &pq.Error{Code: pqerror.Code(code), Severity: severity, Message: "m"})
	}
	cases := []struct {
		what string
		err  error
		want kind
	}{
		{"connection failure (08006)", pqErr("08006", "ERROR"), unavailable},
		{"admin shutdown (57P01)", pqErr("57P01", "FATAL"), unavailable},
		{"crash shutdown (57P02)", pqErr("57P02", "FATAL"), unavailable},
		{"cannot connect now (57P03)", pqErr("57P03", "FATAL"), unavailable},
		{"too many connections (53300)", pqErr("53300", "FATAL"), unavailable},
		{"statement timeout (57014)", pqErr("57014", "ERROR"), unavailable},
		{"read-only standby (25006)", pqErr("25006", "ERROR"), unavailable},
		{"not accepting connections (55000, FATAL)", pqErr("55000", "FATAL"), unavailable},
		{"unique violation (23505)", pqErr("23505", "ERROR"), transient},
		{"serialization failure (40001)", pqErr("40001", "ERROR"), transient},
		{"check violation (23514)", pqErr("23514", "ERROR"), rowData},
		{"string too long (22001)", pqErr("22001", "ERROR"), rowData},
		{"undefined table (42P01)", pqErr("42P01", "ERROR"), fault},
		{"bad connection", driver.ErrBadConn, unavailable},
		{"connection done", sql.ErrConnDone, unavailable},
		{"EOF", fmt.Errorf("read: %w", io.EOF), unavailable},
		{"unexpected EOF", io.ErrUnexpectedEOF, unavailable},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, unavailable},
		{"reset", fmt.Errorf("write: %w", syscall.ECONNRESET), unavailable},
		{"query timeout", fmt.Errorf("q: %w", context.DeadlineExceeded), unavailable},
		{"caller canceled", fmt.Errorf("q: %w", context.Canceled), canceled},
		{"anything else", errors.New("sql: Scan error"), fault},
	}
	for _, c := range cases {
		if got := classify(c.err); got != c.want {
			t.Errorf("%s: classify = %d; want %d", c.what, got, c.want)
		}
	}
}

func TestFailKeepsTheDriverInside(t *testing.T) {
	s := &Store{log: discardLogger()}
	for _, err := range []error{
		&pq.Error{Code: "08006", Message: "secret detail"},
		&pq.Error{Code: "42P01", Message: `relation "plants" does not exist`},
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
	} {
		got := s.fail("insert", err)
		assertNoDriverError(t, got)
	}
	if err := s.fail("insert", &pq.Error{Code: "57P01", Severity: "FATAL"}); !errors.Is(err, application.ErrUnavailable) {
		t.Errorf("admin shutdown = %v; want ErrUnavailable", err)
	}
}

// With no schema every create fails inside PostgreSQL: the caller gets a
// plain fault with nothing of the driver in it.
func TestFaultFromTheDatabaseIsPlain(t *testing.T) {
	s := openStore(t, pgtest.NewDatabase(t)) // not migrated
	_, _, err := s.InsertIfAbsent(context.Background(), record(t, 1, "Yucca", ""))
	if err == nil || errors.Is(err, application.ErrUnavailable) {
		t.Fatalf("create without a schema = %v; want a fault", err)
	}
	assertNoDriverError(t, err)
}

func assertNoDriverError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.As(err, new(*pq.Error)) || errors.As(err, new(*net.OpError)) {
		t.Errorf("error %q carries a driver error", err)
	}
	for _, leak := range []string{"pq:", "secret detail", "relation", "dial tcp"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error %q shows %q", err, leak)
		}
	}
}
