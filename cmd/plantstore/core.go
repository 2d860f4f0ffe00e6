package main

import (
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/fx"
)

// coreSettings are the process's own.
type coreSettings struct {
	LogLevel logLevel `flag:"log-level" default:"info" help:"debug, info, warn or error"`
	Dev      bool     `flag:"dev" default:"false" help:"development mode: without a configured key, use (and create) a local secret and print a token"`
}

// coreModule provides what every module may need: the settings of all of
// them, the logger, the metrics registry and the listeners' addresses.
func coreModule(c *config, logOut io.Writer) fx.Option {
	return fx.Module("core",
		c.supply(),
		fx.Provide(
			func(s *coreSettings) *slog.Logger {
				return slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: slog.Level(s.LogLevel)}))
			},
			fx.Annotate(newRegistry, fx.As(new(prometheus.Registerer)), fx.As(new(prometheus.Gatherer))),
			func() *Listeners { return &Listeners{} },
			func() *drain { return &drain{} },
			func() *bound { return &bound{} },
			func(s *httpSettings) *gracePeriod { return &gracePeriod{length: s.ShutdownTimeout} },
		),
	)
}

// newRegistry holds the service's metrics, with the Go runtime, process and
// build information collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "plantstore_build_info",
			Help:        "The running version of plantstore; always 1.",
			ConstLabels: prometheus.Labels{"version": buildVersion()},
		}, func() float64 { return 1 }),
	)
	return reg
}
