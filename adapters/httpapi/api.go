package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/plantstore/plantstore/adapters/internal/requestid"
	"github.com/plantstore/plantstore/domain"
)

// DefaultMaxBodyBytes is the request body limit when none is configured.
const DefaultMaxBodyBytes = 64 << 10

// Config holds the adapter's settings.
type Config struct {
	// MaxBodyBytes is the largest request body accepted; larger gets 413.
	MaxBodyBytes int64
	// OpenAPI is the document served at GET /openapi.yaml.
	OpenAPI []byte
	// RequestTimeout is each request's deadline, from the end of its
	// headers: a use case still waiting for the store then gives up, and
	// the client gets 503 50301 with Retry-After. Zero sets none.
	RequestTimeout time.Duration
	// PageBytes bounds the bytes of list and feed pages answered at once;
	// zero or less is DefaultPageBytes. A page that finds no room waits
	// for it within its deadline, then gets 503 50301.
	PageBytes int64
}

// API is the HTTP API: an http.Handler with every route of the contract.
type API struct {
	deps         Deps
	router       *chi.Mux
	metrics      *metrics
	ids          *requestid.Source
	maxBodyBytes int64
	openAPI      []byte
	reference    *referencePage
	tracer       trace.Tracer // nil when tracing is off
	draining     atomic.Bool
	inFlight     atomic.Int64
	timeout      time.Duration // see Config.RequestTimeout
	pages        *pageBudget
}

// New builds the API from its settings and dependencies.
func New(cfg Config, deps Deps) (*API, error) {
	if deps.Verifier == nil || deps.Log == nil {
		return nil, errors.New("httpapi: a verifier and a logger are required")
	}
	if err := missingUseCases(deps); err != nil {
		return nil, err
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	m, err := newMetrics(deps.Metrics)
	if err != nil {
		return nil, err
	}
	page, err := loadReference()
	if err != nil {
		return nil, err
	}
	tracer := newTracer(deps.Tracing)
	if tracer != nil {
		traceUseCases(&deps, tracer)
	}
	a := &API{
		deps:         deps,
		tracer:       tracer,
		metrics:      m,
		ids:          requestid.NewSource(),
		maxBodyBytes: cfg.MaxBodyBytes,
		openAPI:      cfg.OpenAPI,
		reference:    page,
		timeout:      cfg.RequestTimeout,
		pages:        newPageBudget(cfg.PageBytes),
	}
	a.router = a.routes()
	return a, nil
}

// routes is the route table: one line per operation.
func (a *API) routes() *chi.Mux {
	r := chi.NewRouter()
	r.Use(a.observe, answerServerOptions)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) { a.writeError(w, r, errNotFound) })
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		// chi answers a method it does not know (FOO, PRI) with 405 on every
		// path; where no method has a route, the contract's answer is 404.
		allowed, pattern := allowedMethods(a.router, r)
		if allowed == "" {
			a.writeError(w, r, errNotFound)
			return
		}
		// The route exists: metrics and the access line name it.
		if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePattern() == "" {
			rctx.RoutePatterns = append(rctx.RoutePatterns, pattern)
		}
		a.writeError(w, r, errMethodNotAllowed)
	})
	// Every GET route answers HEAD too: the same checks and headers, and
	// net/http leaves the body out.
	get := func(pattern string, h http.HandlerFunc) {
		r.Get(pattern, h)
		r.Head(pattern, h)
	}
	r.Post("/plants", a.createPlant)
	get("/plants", a.listPlants)
	get("/plants/{id}", a.getPlant)
	r.Delete("/plants/{id}", a.deletePlant)
	r.Patch("/plants/{id}", a.changePlant)
	get("/events", a.listEvents)
	get("/openapi.yaml", a.serveOpenAPI)
	a.referenceRoutes(get)
	return r
}

// answerServerOptions answers "OPTIONS *", which asks about the server as a
// whole rather than a resource (RFC 9110 §9.3.7): 200, empty, with a request
// id and an access line like every other answer.
func answerServerOptions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions && r.RequestURI == "*" {
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Drain makes every later response ask the client to close its connection
// (Connection: close), so that clients reconnect, to other replicas once the
// load balancers have noticed, while this one still answers.
func (a *API) Drain() { a.draining.Store(true) }

// InFlight is how many requests the API is serving now: the clients'
// demand, to which background work gives way.
func (a *API) InFlight() int { return int(a.inFlight.Load()) }

// ServeHTTP serves one request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 1 {
		a.refuseVersion(w, r)
		return
	}
	a.router.ServeHTTP(w, r)
}

// errHTTPVersion refuses a request of an HTTP version other than 1.x.
var errHTTPVersion = &domain.FieldError{Field: "request", Problem: "HTTP version not supported; send HTTP/1.1"}

// refuseVersion refuses the one request of another HTTP version that
// net/http hands to its handler, HTTP/2's connection preface ("PRI *
// HTTP/2.0", for a handler that speaks h2c), as the listener refuses the
// others net/http answers by itself (unparsedAnswer: 400 40002, the short
// access line, the route "unparsed"), on the connection taken from
// net/http, which then closes: what follows the preface is HTTP/2's frames.
func (a *API) refuseVersion(w http.ResponseWriter, r *http.Request) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil { // not served over a connection of its own
		w.Header().Set("Connection", "close")
		a.writeError(w, r, errHTTPVersion)
		return
	}
	answerAndClose(c, a.unparsedAnswer(errHTTPVersion.Error()))
}

func (a *API) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.openAPI)))
	_, _ = w.Write(a.openAPI)
}

// candidateMethods are tried, in this order, to fill a 405's Allow header.
var candidateMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions,
}

// allowedMethods lists the methods the router serves for r's path, and the
// pattern of the route that serves them.
func allowedMethods(router *chi.Mux, r *http.Request) (allowed, pattern string) {
	var methods []string
	for _, m := range candidateMethods {
		if p := router.Find(chi.NewRouteContext(), m, r.URL.Path); p != "" {
			methods, pattern = append(methods, m), p
		}
	}
	return strings.Join(methods, ", "), pattern
}
