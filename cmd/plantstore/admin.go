package main

import (
	"context"
	"log/slog"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/admin"
	"github.com/plantstore/plantstore/adapters/httpapi"
)

// adminMaxConnections caps the admin listener's open connections. Its
// clients are few and known, the probes and the metrics scraper (and a
// profiler, when profiling is on), so a small fixed cap serves them and keeps
// a client that opens many from costing the API its memory.
const adminMaxConnections = 16

// adminSettings are the admin listener's: health, readiness and metrics.
type adminSettings struct {
	Addr      address `flag:"admin-addr" default:"127.0.0.1:9090" help:"admin listener address (/healthz, /readyz, /metrics)"`
	Profiling bool    `flag:"profiling" default:"false" help:"serve Go runtime profiles at /debug/pprof/ on the admin listener"`
}

// adminModule runs health checks and metrics on the admin listener.
var adminModule = fx.Module("admin",
	fx.Provide(
		fx.Private,
		func(p admin.Pinger, g prometheus.Gatherer, s *adminSettings) *admin.Handler {
			return admin.New(p, g, s.Profiling)
		},
	),
	fx.Invoke(func(lc fx.Lifecycle, s *adminSettings, hs *httpSettings, grace *gracePeriod, h *admin.Handler, ls *Listeners, b *bound, d *drain, log *slog.Logger) {
		d.onDrain(h.Drain)
		srv := newServer(hs, h, log)
		conns := httpapi.NewConnLimit(adminMaxConnections, "admin", log)
		wrap := func(ln net.Listener) net.Listener { return conns.Limit(srv, ln) }
		hook := serverHook("admin", "PLANTSTORE_ADMIN_ADDR", string(s.Addr), wrap, srv, nil, b, &ls.Admin, grace, log)
		stop := hook.OnStop
		hook.OnStop = func(ctx context.Context) error {
			h.Drain()
			return stop(ctx)
		}
		lc.Append(hook)
	}),
)
