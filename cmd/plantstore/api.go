package main

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/dispatch"
	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/docs"
)

// apiSettings are the API listener's.
type apiSettings struct {
	Addr         address  `flag:"addr" default:":8080" help:"API listener address"`
	MaxBodyBytes byteSize `flag:"max-body-bytes" default:"65536" help:"request body limit in bytes"`
}

// apiModule runs the HTTP API on its own listener. The adapter takes its use
// cases and verifier through httpapi.Deps, filled by type.
var apiModule = fx.Module("httpapi",
	fx.Provide(
		fx.Private,
		func(s *apiSettings, deps httpapi.Deps) (*httpapi.API, error) {
			return httpapi.New(httpapi.Config{MaxBodyBytes: int64(s.MaxBodyBytes), OpenAPI: docs.OpenAPI}, deps)
		},
	),
	// The clients' demand, which the webhook's deliveries give way to.
	fx.Provide(func(api *httpapi.API) dispatch.Demand { return api }),
	fx.Invoke(func(lc fx.Lifecycle, s *apiSettings, hs *httpSettings, grace *gracePeriod, api *httpapi.API, ls *Listeners, b *bound, d *drain, log *slog.Logger) {
		d.onDrain(api.Drain)
		srv := newServer(hs, api, log)
		lc.Append(serverHook("API", "PLANTSTORE_ADDR", string(s.Addr), api.Listener, srv, b, &ls.API, grace, log))
	}),
)
