package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// With PostgreSQL refusing connections, creates answer 503 with Retry-After
// and readiness fails; once it accepts them again, creates succeed and the
// service is ready, without a restart.
func TestPostgreSQLOutageAnswers503AndRecovers(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	admin := pgtest.Admin(t)
	name := pgtest.DatabaseName(databaseURL)
	s := startService(t, databaseURL, map[string]string{"PLANTSTORE_DB_QUERY_TIMEOUT": "2s"})
	before := s.create(t, `{"id":1,"name":"Before","tag":"outage"}`)
	before.expect(t, 200, "")
	s.adminGet(t, "/readyz").expect(t, 200, "")

	refuseConnections(t, admin, name)
	for id := 2; id <= 3; id++ { // more than one: no stale connection lets one through
		r := s.create(t, `{"id":`+strconv.Itoa(id)+`,"name":"During"}`)
		r.expectError(t, 503, "50301")
		require.NotEmpty(t, r.header.Get("Retry-After"), "503 without Retry-After")
	}
	s.adminGet(t, "/readyz").expect(t, 503, "")

	allowConnections(t, admin, name)
	var refused []answer
	require.Eventually(t, func() bool {
		r := s.create(t, `{"id":2,"name":"During"}`)
		if r.status != 200 {
			refused = append(refused, r)
		}
		return r.status == 200
	}, time.Minute, 50*time.Millisecond, "creates succeed again once the database accepts connections")
	for _, r := range refused {
		r.expectError(t, 503, "50301")
	}
	s.adminGet(t, "/readyz").expect(t, 200, "")
	// What was stored before the outage is still there; nothing refused
	// during it was stored.
	s.create(t, `{"id":1,"name":"Before","tag":"outage"}`).expect(t, 200, before.body)
	s.create(t, `{"id":1,"name":"Other"}`).expectError(t, 409, "40901")
	s.create(t, `{"id":3,"name":"After"}`).expect(t, 200, `{"name":"After"}`)
}

// refuseConnections makes the database refuse new connections and ends its
// sessions, until the test ends or allowConnections is called.
func refuseConnections(t *testing.T, admin *sqlx.DB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" WITH ALLOW_CONNECTIONS false")
	require.NoError(t, err)
	// Let pgtest drop the database, whatever happens here.
	t.Cleanup(func() { allowConnections(t, admin, name) })
	require.Eventually(t, func() bool {
		var left int
		err := admin.GetContext(ctx, &left, `
			SELECT count(*) FROM (
				SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE datname = $1 AND pid <> pg_backend_pid()) AS terminated`, name)
		if err != nil {
			t.Error(err)
			return true // the test has failed: stop waiting
		}
		return left == 0 // no session was left to end
	}, time.Minute, 20*time.Millisecond, "sessions of %s end", name)
}

func allowConnections(t *testing.T, admin *sqlx.DB, name string) {
	t.Helper()
	if _, err := admin.Exec("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS true"); err != nil {
		t.Errorf("allow connections to %s again: %v", name, err)
	}
}
