package postgres

import (
	"context"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/domain"
)

func TestMigrateConcurrentlyAndAgain(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := openStore(t, url), openStore(t, url)
	ctx := context.Background()

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []*Store{a, b} {
		wg.Go(func() { errs[i] = s.Migrate(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Migrate: %v", err)
		}
	}
	if err := a.Migrate(ctx); err != nil {
		t.Fatalf("Migrate on an up-to-date schema: %v", err)
	}

	var applied int
	if err := a.db.Get(&applied, "SELECT count(*) FROM goose_db_version WHERE version_id > 0 AND is_applied"); err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(files) {
		t.Fatalf("%d migrations recorded; want %d, each applied once", applied, len(files))
	}
	if _, _, err := a.InsertIfAbsent(ctx, record(t, 1, "Palm", "")); err != nil {
		t.Fatalf("create after Migrate: %v", err)
	}
}

// The CHECK constraints are the second line of defence: they refuse rows
// written around the service, and never a row the domain accepts.
func TestCheckConstraintsBackTheDomain(t *testing.T) {
	s, _ := newStore(t)
	insert := func(name string, tag *string) error {
		_, err := s.db.Exec("INSERT INTO plants (id, name, tag, created_by, created_at) VALUES ((SELECT coalesce(max(id), 0) + 1 FROM plants), $1, $2, 'sql', now())", name, tag)
		return err
	}
	str := func(s string) *string { return &s }

	refused := []struct {
		what string
		name string
		tag  *string
	}{
		{"empty name", "", nil},
		{"blank name", "   ", nil},
		{"name of 201 characters", strings.Repeat("é", 201), nil},
		{"tab in name", "a\tb", nil},
		{"DEL in name", "a\x7fb", nil},
		{"empty tag", "Rose", str("")},
		{"blank tag", "Rose", str(" ")},
		{"tag of 65 characters", "Rose", str(strings.Repeat("x", 65))},
		{"newline in tag", "Rose", str("a\nb")},
	}
	for _, c := range refused {
		if _, err := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: c.name, Tag: c.tag}); err == nil {
			t.Fatalf("%s: the domain accepts it; the case is wrong", c.what)
		}
		if err := insert(c.name, c.tag); err == nil {
			t.Errorf("%s: the database accepted it", c.what)
		}
	}

	accepted := []struct {
		what string
		name string
		tag  *string
	}{
		{"name of 200 four-byte characters", strings.Repeat("🌵", 200), nil},
		{"tag of 64 characters", "Rose", str(strings.Repeat("ß", 64))},
		{"spaces around a name", "  Rose  ", str(" red ")},
		{"C1 control characters", "a\u0085b", str("\u009fx")},
		{"no-break space with text", "\u00a0Lily", nil},
	}
	for _, c := range accepted {
		if _, err := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: c.name, Tag: c.tag}); err != nil {
			t.Fatalf("%s: the domain refuses it (%v); the case is wrong", c.what, err)
		}
		if err := insert(c.name, c.tag); err != nil {
			t.Errorf("%s: the database refused it: %v", c.what, err)
		}
	}
}

func TestMigrateRefusesANonUTF8Database(t *testing.T) {
	admin := pgtest.Admin(t)
	url := pgtest.NewDatabase(t)
	name := pgtest.DatabaseName(url)
	// Recreate it as SQL_ASCII, where char_length counts bytes.
	if _, err := admin.Exec("DROP DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE DATABASE " + name + " TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, url)
	err := s.Migrate(context.Background())
	if err == nil || !strings.Contains(err.Error(), "UTF8") {
		t.Fatalf("Migrate on SQL_ASCII = %v; want a refusal naming UTF8", err)
	}
}

// The queries of a page are range scans of an index in id order, with no
// sort: the primary key without a tag, plants_tag_id with one.
func TestListQueriesUseTheirIndex(t *testing.T) {
	ctx := context.Background()
	conn := planningConn(t)
	for query, args := range map[string][]any{
		listPages:       {"{0,5}", "{10,10}"},
		listTaggedPages: {"{0,5}", "{10,10}", `{"fern","moss"}`},
	} {
		var plan []string
		if err := conn.SelectContext(ctx, &plan, "EXPLAIN (COSTS OFF) "+query, args...); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		want := "Index Scan using plants_pkey"
		if query == listTaggedPages {
			want = "Index Scan using plants_tag_id"
		}
		if !strings.Contains(text, want) || strings.Contains(text, "Sort") {
			t.Errorf("%s:\n%s\nwant %s and no sort", query, text, want)
		}
	}
}

// A claim reads a receiver's due events through webhook_events_url_due and
// its packed rows through their (url, id) primary key, and so for each
// payload's pair of tables, in the plan
// PostgreSQL makes for the statement's parameters and in the generic plan
// it may keep for a prepared statement, so that claims cost the same
// however large the outbox grows.
func TestClaimsUseTheOutboxIndexes(t *testing.T) {
	ctx := context.Background()
	conn := planningConn(t) // the outbox's own sessions run so too (outboxDB)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		for query, want := range map[string][]string{
			plantTables.claimStatement(16):     {"webhook_events_url_due", "webhook_event_batches_pkey"},
			plantTables.unpackStatement(16):    {"webhook_event_batches_pkey"},
			envelopeTables.claimStatement(16):  {"webhook_envelopes_url_due", "webhook_envelope_batches_pkey"},
			envelopeTables.unpackStatement(16): {"webhook_envelope_batches_pkey"},
		} {
			// EXPLAIN of a prepared statement shows the plan it runs with:
			// under force_generic_plan, one for any parameters ($n).
			if _, err := conn.ExecContext(ctx, "PREPARE claim (timestamptz, timestamptz, text, text) AS "+query); err != nil {
				t.Fatal(err)
			}
			var plan []string
			err := conn.SelectContext(ctx, &plan, `EXPLAIN (COSTS OFF) EXECUTE claim(now(), now() + interval '1 minute', 'claim-1', 'http://receiver.test/')`)
			if _, derr := conn.ExecContext(ctx, "DEALLOCATE claim"); err == nil {
				err = derr
			}
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			for _, index := range want {
				if !scansByURL(plan, index) {
					t.Errorf("%s plan of%s\n%s\nwant a scan of %s by url", mode, query, text, index)
				}
			}
			if strings.Contains(text, "Seq Scan") {
				t.Errorf("%s plan of%s\n%s\nwant no sequential scan", mode, query, text)
			}
			if generic := strings.Contains(text, "$4"); generic != (mode == "force_generic_plan") {
				t.Errorf("%s plan of%s\n%s\nis not the plan asked for", mode, query, text)
			}
		}
	}
}

// scansByURL reports whether plan scans index with the receiver's URL as
// its condition, not merely reading it in another order.
func scansByURL(plan []string, index string) bool {
	for i, line := range plan {
		if strings.Contains(line, "Index Scan") && strings.Contains(line, " "+index) &&
			i+1 < len(plan) && strings.Contains(plan[i+1], "Index Cond: ") && strings.Contains(plan[i+1], "(url = ") {
			return true
		}
	}
	return false
}

// planningConn is a connection to a fresh store's database that avoids
// sequential scans: on tables this small one would win, and the question a
// plan test asks is whether an index can serve the query at all.
func planningConn(t *testing.T) *sqlx.Conn {
	t.Helper()
	s, _ := newStore(t)
	ctx := context.Background()
	conn, err := s.db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	return conn
}
