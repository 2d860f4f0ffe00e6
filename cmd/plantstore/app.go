package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/plantstore/plantstore/adapters/admin"
	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs"
)

// newApp wires the service: the core (config, logger, metrics registry), one
// module per adapter, and the use case between them. extra options let tests
// observe or replace parts.
func newApp(cfg *Config, logOut io.Writer, extra ...fx.Option) *fx.App {
	opts := []fx.Option{
		coreModule(cfg, logOut),
		storeModule(cfg),
		authModule,
		useCaseModule,
		apiModule,
		adminModule,
		fx.WithLogger(func(log *slog.Logger) fxevent.Logger {
			l := &fxevent.SlogLogger{Logger: log}
			// Wiring details only when debugging; a failure is reported once,
			// as one line, by the command.
			l.UseLogLevel(slog.LevelDebug)
			l.UseErrorLevel(slog.LevelDebug)
			return l
		}),
		fx.StartTimeout(cfg.DBStartupWait + 15*time.Second),
		fx.StopTimeout(cfg.ShutdownTimeout + 15*time.Second),
	}
	return fx.New(append(opts, extra...)...)
}

// coreModule provides what every adapter may need.
func coreModule(cfg *Config, logOut io.Writer) fx.Option {
	return fx.Module("core",
		fx.Supply(cfg),
		fx.Provide(
			func() *slog.Logger {
				return slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: cfg.LogLevel}))
			},
			fx.Annotate(newRegistry, fx.As(new(prometheus.Registerer)), fx.As(new(prometheus.Gatherer))),
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

// useCaseModule provides the application's use cases, each bound to the
// port its inbound adapter declares: one line per use case.
var useCaseModule = fx.Module("application",
	fx.Provide(
		func(cfg *Config) application.Scopes {
			return application.Scopes{Read: cfg.ReadScope, Write: cfg.WriteScope}
		},
		fx.Annotate(application.NewCreatePlant, fx.As(new(httpapi.PlantCreator))),
		fx.Annotate(application.NewGetPlant, fx.As(new(httpapi.PlantGetter))),
		fx.Annotate(application.NewListPlants, fx.As(new(httpapi.PlantLister))),
		fx.Annotate(application.NewDeletePlant, fx.As(new(httpapi.PlantDeleter))),
	),
)

// Listeners records the addresses the service listens on, once started.
type Listeners struct {
	API, Admin net.Addr
}

// apiModule runs the HTTP API on its own listener.
var apiModule = fx.Module("httpapi",
	fx.Provide(
		func(cfg *Config, deps httpapi.Deps) (*httpapi.API, error) {
			return httpapi.New(httpapi.Config{MaxBodyBytes: cfg.MaxBodyBytes, OpenAPI: docs.OpenAPI}, deps)
		},
		func() *Listeners { return &Listeners{} },
	),
	fx.Invoke(func(lc fx.Lifecycle, cfg *Config, api *httpapi.API, ls *Listeners, log *slog.Logger) {
		srv := newServer(cfg, api, log)
		lc.Append(serverHook("API", cfg.Addr, srv, &ls.API, cfg.ShutdownTimeout, log))
	}),
)

// adminModule runs health checks and metrics on the admin listener.
var adminModule = fx.Module("admin",
	fx.Provide(func(p admin.Pinger, g prometheus.Gatherer, cfg *Config) *admin.Handler {
		return admin.New(p, g, cfg.Profiling)
	}),
	fx.Invoke(func(lc fx.Lifecycle, cfg *Config, h *admin.Handler, ls *Listeners, log *slog.Logger) {
		srv := newServer(cfg, h, log)
		hook := serverHook("admin", cfg.AdminAddr, srv, &ls.Admin, cfg.ShutdownTimeout, log)
		stop := hook.OnStop
		hook.OnStop = func(ctx context.Context) error {
			h.Drain()
			return stop(ctx)
		}
		lc.Append(hook)
	}),
)

// newServer applies the configured limits to an HTTP server.
func newServer(cfg *Config, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// serverHook listens on start, so a taken port fails start-up, and shuts
// down gracefully on stop: no new connections, in-flight requests finish
// within the grace period, after which the remaining connections are closed.
func serverHook(name, addr string, srv *http.Server, bound *net.Addr, grace time.Duration, log *slog.Logger) fx.Hook {
	return fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("%s listener on %s: %w", name, addr, errors.Unwrap(err))
			}
			*bound = ln.Addr()
			log.Info("listening", "listener", strings.ToLower(name), "addr", ln.Addr().String())
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("listener failed", "listener", strings.ToLower(name), "error", err.Error())
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, grace)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				log.Warn("grace period over, closing connections", "listener", strings.ToLower(name), "error", err.Error())
				return srv.Close()
			}
			return nil
		},
	}
}
