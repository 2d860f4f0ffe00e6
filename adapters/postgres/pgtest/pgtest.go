// Package pgtest gives tests a fresh PostgreSQL database of their own. It is
// for tests only: the store's own tests and the service's end-to-end tests.
//
// The server is the one named by PLANTSTORE_TEST_DATABASE_URL, or a local
// one at postgres://postgres@127.0.0.1:5432/postgres. When it cannot be
// reached the test is skipped, unless CI=true, where it fails: a CI run must
// never pass by skipping the database tests.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the "postgres" driver
)

// EnvURL names the variable that points the tests at a PostgreSQL server.
const EnvURL = "PLANTSTORE_TEST_DATABASE_URL"

// DefaultURL is the server used when EnvURL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// adminTimeout bounds each administrative step, so that a hung server fails
// the test instead of hanging it.
const adminTimeout = 30 * time.Second

// AdminURL returns the URL of the server's maintenance database, through
// which tests create, drop and lock out their databases.
func AdminURL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// Admin returns a connection to the maintenance database, closed when the
// test ends. It skips or fails the test as described in the package comment
// when the server cannot be reached.
func Admin(t testing.TB) *sqlx.DB {
	t.Helper()
	raw := AdminURL()
	db, err := sqlx.Open("postgres", raw)
	if err != nil {
		t.Fatalf("pgtest: %s is not a usable URL: %v", EnvURL, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		msg := fmt.Sprintf("PostgreSQL not reachable at %s: %s", host(raw), oneLine(err))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// NewDatabase creates an empty database with a random name and returns its
// URL. The database is dropped, its connections cut, when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := Admin(t)
	name := "plantstore_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	// template0 and the C locale make the database UTF-8 whatever the
	// server's defaults are; the store refuses any other encoding.
	create := "CREATE DATABASE " + name + " TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
	if _, err := admin.ExecContext(ctx, create); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(AdminURL())
	if err != nil {
		t.Fatalf("pgtest: %s must be a postgres:// URL: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// DatabaseName returns the database a URL made by NewDatabase points at.
func DatabaseName(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// host returns host:port of a URL, so that no message shows its password.
func host(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		return u.Host
	}
	return "the configured server"
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
