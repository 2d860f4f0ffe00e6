// Package eventprune removes, in the background, the events the event feed
// no longer keeps: those committed longer than the retention ago. It is an
// adapter driven by the service's lifecycle, as the webhook worker is, and
// reaches the store through application.EventPruner alone.
//
// Every replica runs it. Each pass removes a bounded number of events per
// statement and a bounded number of statements, so that a backlog (a
// retention just shortened, a replica that was down) is worked off over
// several passes instead of in one long transaction; concurrent passes of
// several replicas are harmless, as the store promises.
package eventprune

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/plantstore/plantstore/application"
)

// Defaults for zero Config fields.
const (
	DefaultEvery      = time.Minute
	DefaultBatch      = 1000
	DefaultMaxBatches = 10
)

// Config says what to prune and how much at a time.
type Config struct {
	// Retention is how long events are kept.
	Retention application.EventRetention
	// Every is the time between passes (DefaultEvery).
	Every time.Duration
	// Batch is the most events one statement removes (DefaultBatch; a
	// store that keeps a write statement's events together counts those), and
	// MaxBatches the most statements of one pass (DefaultMaxBatches).
	Batch, MaxBatches int
}

// Pruner runs passes from Start to Stop.
type Pruner struct {
	cfg   Config
	store application.EventPruner
	log   *slog.Logger

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// New returns a pruner of store's events; log receives its failures.
func New(cfg Config, store application.EventPruner, log *slog.Logger) *Pruner {
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.MaxBatches <= 0 {
		cfg.MaxBatches = DefaultMaxBatches
	}
	return &Pruner{cfg: cfg, store: store, log: log, cancel: func() {}}
}

// Start runs a pass now and then one every cfg.Every, until Stop.
func (p *Pruner) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.done.Go(func() {
		tick := time.NewTicker(p.cfg.Every)
		defer tick.Stop()
		for {
			p.Pass(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

// Stop ends the passes, cutting a pass in progress short (what it removed
// is committed; the rest waits for a later pass), and returns when the
// loop has ended or ctx has.
func (p *Pruner) Stop(ctx context.Context) {
	p.cancel()
	ended := make(chan struct{})
	go func() {
		p.done.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-ctx.Done():
	}
}

// Pass removes the events due, at most cfg.Batch per statement and
// cfg.MaxBatches statements, and returns how many it removed.
func (p *Pruner) Pass(ctx context.Context) int {
	removed := 0
	for range p.cfg.MaxBatches {
		n, err := p.store.PruneEvents(ctx, p.cfg.Retention, p.cfg.Batch)
		removed += n
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("old events could not be pruned", "error", err.Error())
			}
			break
		}
		if n < p.cfg.Batch {
			break
		}
	}
	if removed > 0 {
		p.log.Debug("old events pruned", "events", removed)
	}
	return removed
}
