package pgcluster

import (
	"context"
	"database/sql"
	"testing"
)

// BurnTransactionIDs hands out transaction ids on the database at url until
// ctx ends, in transactions that write nothing the standby is sent until
// the WAL is next flushed: a crash of the primary loses them, and a
// promoted standby hands the same ids out again. Run it on another
// database of the primary, beside a feed's readers.
func BurnTransactionIDs(ctx context.Context, t testing.TB, url string) {
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Error(err)
		return
	}
	defer db.Close()
	for ctx.Err() == nil {
		_, _ = db.ExecContext(ctx, "SELECT pg_current_xact_id()")
	}
}
