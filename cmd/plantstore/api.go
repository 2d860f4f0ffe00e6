package main

import (
	"errors"
	"log/slog"
	"net"
	"strconv"

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
	MaxConnections int `flag:"max-connections" default:"512" check:"positive" help:"most open client connections on the API listener; past it one that sent no request for a second, or the longest idle one, is closed, or the new one answered 503"`
	// A quarter of the cap by default: one client address (or the
	// attacker behind it) cannot keep the others out (docs/operations.md,
	// "Admission"). Behind a proxy every client has the proxy's address.
	MaxConnectionsPerClient clientShare `flag:"max-connections-per-client" default:"auto" help:"most of those connections one client address (an IPv6 /64) may hold; past it that address's own connection that sent no request for a second, or its longest idle one, is closed, or the new one answered 503 (auto: a quarter of max-connections; behind a proxy, set it to max-connections)"`
}

// clientShare is a number of connections, or auto (zero): a quarter of the
// cap.
type clientShare int

func (n *clientShare) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*n = 0
		return nil
	}
	v, err := strconv.Atoi(string(b))
	if err != nil || v <= 0 {
		return errors.New("must be auto or a positive whole number")
	}
	*n = clientShare(v)
	return nil
}

// admission is the API listener's connection limits, the auto share
// resolved and a share over the cap cut to it.
func (s *apiSettings) admission() httpapi.Admission {
	share := int(s.MaxConnectionsPerClient)
	if share == 0 {
		share = max(1, s.MaxConnections/4)
	}
	return httpapi.Admission{MaxConnections: s.MaxConnections, PerClient: min(share, s.MaxConnections)}
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
		conns := api.ConnLimit(s.admission())
		wrap := func(ln net.Listener) net.Listener { return conns.Limit(srv, api.Listener(ln)) }
		lc.Append(serverHook("API", "PLANTSTORE_ADDR", string(s.Addr), wrap, srv, httpapi.Abortable(srv), b, &ls.API, grace, log))
	}),
)
