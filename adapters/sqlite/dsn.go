package sqlite

import (
	"net/url"
	"strconv"
	"strings"
)

// busyTimeoutMillis is how long a connection waits for another writer (for
// example a second process on the same file) before SQLITE_BUSY.
const busyTimeoutMillis = 5000

// dsn builds the driver's data source name for the file at path. Pragmas go
// in the DSN so that every connection a pool opens gets them, not just the
// first. journal_mode=WAL lets readers run beside the writer; in WAL mode
// synchronous=NORMAL may lose the last commits on power loss, FULL does not.
// _txlock=immediate makes BEGIN take the write lock at once, so a
// transaction never fails half-way when upgrading from a read lock.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMillis)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + escapePath(path) + "?" + q.Encode()
}

// DSN is the data source name the store writes through for the file at path,
// pragmas included. It is exported for tools/benche2e, whose plain SQLite loop
// must pay for exactly the fsyncs the store pays for.
func DSN(path string) string { return dsn(path, false) }

// escapePath escapes the characters a file: URI gives a meaning to, so any
// path names the file it says.
func escapePath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}
