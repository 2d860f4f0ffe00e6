package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/plantstore/plantstore/application"
)

// DefaultMaxBodyBytes is the request body limit when none is configured.
const DefaultMaxBodyBytes = 64 << 10

// Config holds the adapter's settings.
type Config struct {
	// MaxBodyBytes is the largest request body accepted; larger gets 413.
	MaxBodyBytes int64
	// RequiredScope is named in a 403's WWW-Authenticate header.
	RequiredScope string
	// OpenAPI is the document served at GET /openapi.yaml.
	OpenAPI []byte
}

// API is the HTTP API: an http.Handler with every route of the contract.
type API struct {
	router        *chi.Mux
	creator       PlantCreator
	verifier      application.TokenVerifier
	log           *slog.Logger
	metrics       *metrics
	ids           *requestIDs
	maxBodyBytes  int64
	requiredScope string
	openAPI       []byte
	reference     *referencePage
}

// New builds the API around a create-plant use case and a token verifier.
// Its metrics are registered on reg when reg is not nil.
func New(cfg Config, creator PlantCreator, verifier application.TokenVerifier, log *slog.Logger, reg prometheus.Registerer) (*API, error) {
	if creator == nil || verifier == nil || log == nil {
		return nil, errors.New("httpapi: a use case, a verifier and a logger are required")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	page, err := loadReference()
	if err != nil {
		return nil, err
	}
	a := &API{
		creator:       creator,
		verifier:      verifier,
		log:           log,
		metrics:       m,
		ids:           newRequestIDs(),
		maxBodyBytes:  cfg.MaxBodyBytes,
		requiredScope: cfg.RequiredScope,
		openAPI:       cfg.OpenAPI,
		reference:     page,
	}
	a.router = a.routes()
	return a, nil
}

func (a *API) routes() *chi.Mux {
	r := chi.NewRouter()
	r.Use(a.observe)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) { a.writeError(w, r, errNotFound) })
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		// chi answers a method it does not know (FOO, PRI) with 405 on every
		// path; where no method has a route, the contract's answer is 404.
		if allowedMethods(a.router, r) == "" {
			a.writeError(w, r, errNotFound)
			return
		}
		a.writeError(w, r, errMethodNotAllowed)
	})
	r.Post("/plants", a.createPlant)
	r.Get("/openapi.yaml", a.serveOpenAPI)
	a.referenceRoutes(r)
	return r
}

// ServeHTTP serves one request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.router.ServeHTTP(w, r) }

func (a *API) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(a.openAPI)
}

// candidateMethods are tried, in this order, to fill a 405's Allow header.
var candidateMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions,
}

// allowedMethods lists the methods the router serves for r's path.
func allowedMethods(router *chi.Mux, r *http.Request) string {
	var allowed []string
	for _, m := range candidateMethods {
		if router.Match(chi.NewRouteContext(), m, r.URL.Path) {
			allowed = append(allowed, m)
		}
	}
	return strings.Join(allowed, ", ")
}
