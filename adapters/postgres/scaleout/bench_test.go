package scaleout

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// BenchmarkPooler measures what running without session state costs: the
// store on a direct connection as it runs by default (none), the same with
// PLANTSTORE_DATABASE_POOLER=transaction (no prepared statements, the
// outbox's settings per transaction), and through PgBouncer in transaction
// mode with a server pool of 8. Creates, reads and lists run from 64
// goroutines on a table of 10,000 plants.
func BenchmarkPooler(b *testing.B) {
	setups := []struct {
		name   string
		pooler postgres.Pooler
		bounce bool
	}{{"direct", postgres.PoolerNone, false}, {"direct-transaction", postgres.PoolerTransaction, false}, {"pgbouncer", postgres.PoolerTransaction, true}}
	for _, setup := range setups {
		b.Run(setup.name, func(b *testing.B) {
			url := pgtest.NewDatabase(b)
			if setup.bounce {
				url = startBouncer(b, 8).url(b, url)
			}
			s, err := postgres.Open(context.Background(), postgres.Config{URL: url, Pooler: setup.pooler, MaxOpenConns: 16})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			if err := s.Migrate(context.Background()); err != nil {
				b.Fatal(err)
			}
			const stored = 10_000
			var next atomic.Int64
			create := func() error {
				id := next.Add(1)
				np, _ := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: fmt.Sprintf("Fern %d", id)})
				_, _, err := s.InsertIfAbsent(context.Background(), application.Record{Plant: domain.PlantFrom(np), CreatedBy: "bench", CreatedAt: time.Now()})
				return err
			}
			for range stored {
				if err := create(); err != nil {
					b.Fatal(err)
				}
			}
			ops := map[string]func(i int64) error{
				"create": func(int64) error { return create() },
				"find": func(i int64) error {
					_, _, err := s.FindPlant(context.Background(), domain.ID(1+i%stored))
					return err
				},
				"list": func(i int64) error {
					_, err := s.ListPlants(context.Background(), application.ListQuery{After: domain.ID(i % stored), HasAfter: true, Limit: 20})
					return err
				},
			}
			for _, name := range []string{"create", "find", "list"} {
				b.Run(name, func(b *testing.B) {
					var n atomic.Int64
					b.SetParallelism(32) // 64 goroutines on two cores
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := ops[name](n.Add(7919)); err != nil {
								b.Error(err)
								return
							}
						}
					})
				})
			}
		})
	}
}
