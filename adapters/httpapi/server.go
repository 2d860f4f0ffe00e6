package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ServerLimits bound what a client can hold of an HTTP server: how long it
// may take to send its headers and its request, how long an answer may take
// to write, how long an idle keep-alive connection stays open, and how large
// its header block may be. A zero field leaves net/http's default.
type ServerLimits struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
}

// NewServer is the HTTP server that serves h within limits, logging what
// net/http reports (a failed TLS handshake, a panic it recovered) to log as
// warnings. The service serves the API and its admin listener with it, and
// the API's tests serve the API with it, so that both meet the same
// refusals of net/http.
func NewServer(h http.Handler, limits ServerLimits, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: limits.ReadHeaderTimeout,
		ReadTimeout:       limits.ReadTimeout,
		WriteTimeout:      limits.WriteTimeout,
		IdleTimeout:       limits.IdleTimeout,
		MaxHeaderBytes:    limits.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// "OPTIONS *" goes to the handler too, which answers it with a
		// request id and an access line, like every other request.
		DisableGeneralOptionsHandler: true,
	}
}

// errShuttingDown is why the requests a stop aborted end: they are
// answered 503 50301 with Retry-After, as the service shuts down.
var errShuttingDown = errors.New("the service is shutting down, retry later")

// Abortable lets the requests srv serves be ended: abort ends their
// contexts, so that each still waiting (for the store, most often) is
// answered 503 50301 at once rather than left to the connection's close.
// A stop calls it when its grace period ends, before it closes the
// connections. It sets srv.BaseContext; call it before srv serves.
func Abortable(srv *http.Server) (abort func()) {
	base, cancel := context.WithCancelCause(context.Background())
	srv.BaseContext = func(net.Listener) context.Context { return base }
	return func() { cancel(errShuttingDown) }
}
