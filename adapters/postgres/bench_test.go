package postgres

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// BenchmarkInsertIfAbsent measures creates of distinct plants from many
// goroutines, which group commit gathers into batches.
func BenchmarkInsertIfAbsent(b *testing.B) {
	s, _ := newStore(b)
	rec := record(b, 0, "Bench", "load")
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := rec
			r.Plant = record(b, next.Add(1), "Bench", "load").Plant
			if _, _, err := s.InsertIfAbsent(context.Background(), r); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	var m dto.Metric
	if err := s.metrics.batchSize.Write(&m); err == nil && m.GetHistogram().GetSampleCount() > 0 {
		h := m.GetHistogram()
		b.ReportMetric(h.GetSampleSum()/float64(h.GetSampleCount()), "creates/commit")
	}
}

// BenchmarkSingleInsert is the naive baseline: one unprepared statement and
// one commit per create, from as many goroutines.
func BenchmarkSingleInsert(b *testing.B) {
	s, _ := newStore(b)
	var next atomic.Int64
	now := time.Now().UTC()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, err := s.db.ExecContext(context.Background(),
				"INSERT INTO plants (id, name, tag, created_by, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
				next.Add(1), "Bench", "load", "bench", now)
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchPlants is how many plants the change benchmarks preload.
const benchPlants = 100_000

// preload stores plants 1..benchPlants in s's database.
func preload(b *testing.B, s *Store) {
	b.Helper()
	insertPlants(b, s, 1, benchPlants)
	if _, err := s.db.Exec("VACUUM ANALYZE plants"); err != nil {
		b.Fatal(err)
	}
}

// insertPlants stores plants from..to, each with the item the service
// renders for it, as the service would have stored them: a delete of one
// is the plain one statement, not the conditional delete that a plant
// stored without its item takes (deleteUnrendered).
func insertPlants(b *testing.B, s *Store, from, to int64) {
	b.Helper()
	if _, err := s.db.Exec(`INSERT INTO plants (id, name, tag, created_by, created_at, item)
		SELECT id, 'Monstera deliciosa', 'indoor', 'preload', now(), '{"id":' || id || ',"name":"Monstera deliciosa","tag":"indoor"}'
		FROM generate_series($1::bigint, $2::bigint) AS id`, from, to); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkChangePlant measures changes of random stored plants from many
// goroutines, which group commit gathers into batches, as the service runs
// them.
func BenchmarkChangePlant(b *testing.B) {
	s, _ := newStore(b)
	preload(b, s)
	names := [2]domain.Name{record(b, 1, "Monstera adansonii", "").Plant.Name(), record(b, 1, "Monstera deliciosa", "").Plant.Name()}
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			name := names[rand.IntN(2)]
			_, err := s.UpdatePlant(context.Background(), domain.ID(1+rand.Int64N(benchPlants)), func(p domain.Plant) (domain.Plant, error) {
				return p.WithName(name), nil
			})
			if err != nil {
				b.Errorf("UpdatePlant: %v", err)
				return
			}
		}
	})
}

// BenchmarkSingleUpdate is the naive baseline of changes: one unprepared
// UPDATE and one commit per change, from as many goroutines.
func BenchmarkSingleUpdate(b *testing.B) {
	s, _ := newStore(b)
	preload(b, s)
	names := [2]string{"Monstera adansonii", "Monstera deliciosa"}
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.db.ExecContext(context.Background(), "UPDATE plants SET name = $1 WHERE id = $2",
				names[rand.IntN(2)], 1+rand.Int64N(benchPlants)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAnnouncedWrites measures changes and deletes of random stored
// plants, as BenchmarkChangePlant does, with one receiver configured and
// each payload: with the plant payload they announce nothing, with the
// event payload each statement also packs its events into a row of
// webhook_envelope_batches. No dispatcher runs, so the figures are the
// writes' own. Run the payloads alternately (-count) on a busy machine.
func BenchmarkAnnouncedWrites(b *testing.B) {
	for _, op := range []string{"change", "delete"} {
		for _, payload := range []application.Payload{application.PlantPayload, application.EventPayload} {
			b.Run(op+"/"+string(payload), func(b *testing.B) {
				s, _ := newStore(b, func(c *Config) { c.Receivers, c.Payload = []string{"http://receiver.example/hook"}, payload })
				preload(b, s)
				if op == "delete" {
					// Every delete removes a plant: enough of them for any b.N.
					insertPlants(b, s, benchPlants+1, benchPlants+int64(b.N)+1)
				}
				name := record(b, 1, "Monstera adansonii", "").Plant.Name()
				var next atomic.Int64
				b.ReportAllocs()
				b.SetParallelism(16)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						var err error
						if op == "change" {
							_, err = s.UpdatePlant(context.Background(), domain.ID(1+rand.Int64N(benchPlants)), func(p domain.Plant) (domain.Plant, error) {
								return p.WithName(name), nil
							})
						} else {
							_, err = s.DeletePlant(context.Background(), domain.ID(benchPlants+next.Add(1)))
						}
						if err != nil {
							b.Errorf("%s: %v", op, err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkBatchArguments is what a batch of 32 creates, and one of 32
// replacements, cost the service before the statement is sent: each
// plant's row with its item, and the rows as one array literal per
// column. It needs no database.
func BenchmarkBatchArguments(b *testing.B) {
	creates := make([]write, 32)
	replaces := make([]write, 32)
	for i := range creates {
		rec := record(b, int64(1<<62+i), "Monstera deliciosa", "indoor")
		creates[i] = createWrite(rec)
		replaces[i] = write{kind: &replaceKind, id: rec.Plant.ID(), arg: replacement{row: rowOf(rec, 2)}}
	}
	s := &Store{}
	for _, c := range []struct {
		name string
		kind *writeKind
		ws   []write
	}{{"create", &createKind, creates}, {"replace", &replaceKind, replaces}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.kind.args(s, c.ws)
			}
		})
	}
}

// BenchmarkFlush flushes batches of 16 creates, changes or deletes, as
// the batcher flushes them, 8 at once: the batches' size does not depend on
// how the goroutines of a parallel benchmark met, so that the allocations
// per batch and, in a CPU profile, the service's CPU per batch are those of
// the statements and their rows alone. An op is one batch.
func BenchmarkFlush(b *testing.B) {
	const size = 16
	s, _ := newStore(b, func(c *Config) { c.MaxOpenConns = 8 })
	ctx := context.Background()
	run := func(b *testing.B, next func() write) {
		b.ReportAllocs()
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			batch := make([]write, size)
			for pb.Next() {
				for k := range batch {
					batch[k] = next()
				}
				for _, r := range s.flush(ctx, batch) {
					if r.Err != nil || !r.Value.done {
						b.Errorf("flush: %+v", r)
						return
					}
				}
			}
		})
	}
	var created atomic.Int64
	b.Run("create", func(b *testing.B) {
		rec := record(b, 1, "Monstera deliciosa", "indoor")
		run(b, func() write {
			r := rec
			r.Plant = record(b, 1<<62+created.Add(1), "Monstera deliciosa", "indoor").Plant
			return createWrite(r)
		})
	})
	preload(b, s)
	names := [2]domain.Name{record(b, 1, "Monstera adansonii", "").Plant.Name(), record(b, 1, "Monstera deliciosa", "").Plant.Name()}
	var changed atomic.Int64
	b.Run("change", func(b *testing.B) {
		run(b, func() write {
			// Distinct ids, each changed to the name it does not have.
			k := changed.Add(1) - 1
			id, name := domain.ID(1+k%benchPlants), names[(k/benchPlants)%2]
			return write{kind: &updateKind, id: id, arg: updating{update: func(p domain.Plant) (domain.Plant, error) {
				return p.WithName(name), nil
			}}}
		})
	})
	var deleted atomic.Int64
	deleted.Store(2 * benchPlants)
	b.Run("delete", func(b *testing.B) {
		insertPlants(b, s, deleted.Load()+1, deleted.Load()+int64(b.N*size))
		run(b, func() write { return deleteWrite(domain.ID(deleted.Add(1))) })
	})
}
