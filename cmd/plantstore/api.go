package main

import (
	"log/slog"
	"net"

	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/dispatch"
	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/docs"
)

// apiSettings are the API listener's.
type apiSettings struct {
	Addr         address  `flag:"addr" default:":8080" help:"API listener address"`
	MaxBodyBytes byteSize `flag:"max-body-bytes" default:"65536" help:"request body limit in bytes"`
	// The default, httpapi.DefaultMaxConnections, keeps the Kubernetes
	// manifest's 128 MiB memory limit with every connection busy with a body
	// at the limit (docs/operations.md, "Admission").
	MaxConnections int `flag:"max-connections" default:"512" check:"positive" help:"most open client connections on the API listener; past it the longest idle one is closed, or the new one answered 503"`
}

// apiModule runs the HTTP API on its own listener. The adapter takes its use
// cases and verifier through httpapi.Deps, filled by type.
var apiModule = fx.Module("httpapi",
	fx.Provide(
		fx.Private,
		func(s *apiSettings, st *storeSettings, deps httpapi.Deps) (*httpapi.API, error) {
			return httpapi.New(httpapi.Config{MaxBodyBytes: int64(s.MaxBodyBytes), OpenAPI: docs.OpenAPI, RequestTimeout: st.QueryTimeout}, deps)
		},
	),
	// The clients' demand, which the webhook's deliveries give way to.
	fx.Provide(func(api *httpapi.API) dispatch.Demand { return api }),
	fx.Invoke(func(lc fx.Lifecycle, s *apiSettings, hs *httpSettings, grace *gracePeriod, api *httpapi.API, ls *Listeners, b *bound, d *drain, log *slog.Logger) {
		d.onDrain(api.Drain)
		srv := newServer(hs, api, log)
		conns := api.ConnLimit(s.MaxConnections)
		wrap := func(ln net.Listener) net.Listener { return conns.Limit(srv, api.Listener(ln)) }
		lc.Append(serverHook("API", "PLANTSTORE_ADDR", string(s.Addr), wrap, srv, httpapi.Abortable(srv), b, &ls.API, grace, log))
	}),
)
