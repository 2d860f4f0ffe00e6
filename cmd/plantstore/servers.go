package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/httpapi"
)

// httpSettings are the limits of both HTTP servers, the API's and the
// admin listener's, and the grace period of their shutdown.
type httpSettings struct {
	ReadHeaderTimeout time.Duration `flag:"read-header-timeout" default:"5s" help:"time a client has to send the request headers"`
	ReadTimeout       time.Duration `flag:"read-timeout" default:"15s" help:"time a client has to send the whole request"`
	WriteTimeout      time.Duration `flag:"write-timeout" default:"30s" help:"time to write a response, from the end of the request headers"`
	IdleTimeout       time.Duration `flag:"idle-timeout" default:"60s" help:"how long an idle keep-alive connection stays open"`
	MaxHeaderBytes    int           `flag:"max-header-bytes" default:"16384" check:"positive" help:"largest request header block in bytes"`
	ShutdownTimeout   time.Duration `flag:"shutdown-timeout" default:"15s" help:"grace period for in-flight requests on SIGTERM/SIGINT"`
	ShutdownDelay     time.Duration `flag:"shutdown-delay" default:"0s" check:"nonnegative" help:"how long the API keeps answering after SIGTERM/SIGINT, with Connection: close, before it stops accepting"`
}

// drain is what a stop signal sets off before the app stops: readiness
// fails and the API asks every client to reconnect, while load balancers
// take the replica out of rotation. Modules register what they change.
type drain struct {
	mu    sync.Mutex
	steps []func()
	begun bool
}

// onDrain registers f to run when the drain begins.
func (d *drain) onDrain(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.steps = append(d.steps, f)
}

// begin runs every registered step, once.
func (d *drain) begin() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.begun {
		return
	}
	d.begun = true
	for _, f := range d.steps {
		f()
	}
}

// gracePeriod is the one grace period of a stop. It begins when the first
// part stops, and every part that waits for work in flight (each listener's
// requests, the webhook's attempts) waits until the same end, whatever order
// the parts stop in: a stop takes the grace period once, not once per part.
type gracePeriod struct {
	length time.Duration
	once   sync.Once
	end    time.Time
}

// within returns ctx bounded by the end of the grace period, which begins
// at the first call.
func (g *gracePeriod) within(ctx context.Context) (context.Context, context.CancelFunc) {
	g.once.Do(func() { g.end = time.Now().Add(g.length) })
	return context.WithDeadline(ctx, g.end)
}

// Listeners records the addresses the service listens on, once started.
type Listeners struct {
	API, Admin net.Addr
}

// bound holds the servers whose listeners are open but not yet serving. Every
// listener binds in its start hook and all begin serving in the last one, so
// that a listener that cannot bind (a port in use) stops start-up before any
// request was answered: the service never half-starts.
type bound struct {
	serve []func()
}

// serveAll starts every bound server.
func (b *bound) serveAll() {
	for _, serve := range b.serve {
		serve()
	}
	b.serve = nil
}

// newServer applies the configured limits to an HTTP server.
func newServer(s *httpSettings, h http.Handler, log *slog.Logger) *http.Server {
	return httpapi.NewServer(h, httpapi.ServerLimits{
		ReadHeaderTimeout: s.ReadHeaderTimeout,
		ReadTimeout:       s.ReadTimeout,
		WriteTimeout:      s.WriteTimeout,
		IdleTimeout:       s.IdleTimeout,
		MaxHeaderBytes:    s.MaxHeaderBytes,
	}, log)
}

// serverHook binds addr on start, so that a taken port fails start-up naming
// setting, wraps the listener with wrap when it is not nil, and leaves the
// serving to b; on stop it shuts down gracefully: no new connections,
// in-flight requests finish within the grace period. When it ends with
// requests still in flight, abort (when not nil) ends them, and each is
// answered 503 50301 as it gives up waiting, within answerAborted; then the
// remaining connections are closed.
func serverHook(name, setting, addr string, wrap func(net.Listener) net.Listener, srv *http.Server, abort func(), b *bound, at *net.Addr, grace *gracePeriod, log *slog.Logger) fx.Hook {
	var ln net.Listener
	return fx.Hook{
		OnStart: func(context.Context) error {
			var err error
			if ln, err = net.Listen("tcp", addr); err != nil {
				return fmt.Errorf("%s: the %s listener cannot listen on %s: %w", setting, name, addr, errors.Unwrap(err))
			}
			*at = ln.Addr()
			if wrap != nil {
				ln = wrap(ln)
			}
			b.serve = append(b.serve, func() {
				log.Info("listening", "listener", strings.ToLower(name), "addr", ln.Addr().String())
				go func() {
					if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
						log.Error("listener failed", "listener", strings.ToLower(name), "error", err.Error())
					}
				}()
			})
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := grace.within(ctx)
			defer cancel()
			// A listener that never served (start-up failed later) is
			// closed here; Shutdown closes those it served on.
			defer ln.Close()
			if err := srv.Shutdown(ctx); err != nil {
				if abort != nil {
					log.Warn("grace period over, answering the requests in flight 503", "listener", strings.ToLower(name))
					abort()
					answered, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerAborted)
					defer cancel()
					if srv.Shutdown(answered) == nil {
						return nil
					}
				}
				log.Warn("grace period over, closing connections", "listener", strings.ToLower(name), "error", err.Error())
				return srv.Close()
			}
			return nil
		},
	}
}

// answerAborted is how long the requests aborted at the end of the grace
// period have to write their 503 before their connections are closed.
const answerAborted = time.Second
