// Package openapitest checks HTTP responses against the service's OpenAPI
// document, so that every response a test sees is one the contract allows.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/plantstore/plantstore/docs"
)

// Contract is the loaded document with a router over its operations.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
}

// Load parses and validates docs/openapi.yaml, once a process: every test
// of a package checks against the one contract, read only.
func Load(t testing.TB) *Contract {
	t.Helper()
	c, err := loadOnce()
	if err != nil {
		t.Fatalf("openapi: %v", err)
	}
	return c
}

var loadOnce = sync.OnceValues(func() (*Contract, error) {
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	return &Contract{doc: doc, router: router}, nil
})

// Check fails t unless resp, whose body is body, is a response the document
// allows for req. Requests for routes the document does not have (404) or
// methods it does not serve (405) must answer the documented Error body.
func (c *Contract) Check(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	if resp.Header.Get("X-Request-ID") == "" {
		t.Errorf("openapi: %s %s answered %d without X-Request-ID", req.Method, req.URL.Path, resp.StatusCode)
	}
	req = pathOnly(req)
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.checkUnrouted(t, req, resp, body)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      route,
			Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: resp.StatusCode,
		Header: resp.Header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		// A HEAD answer has the headers of its GET and never a body.
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: req.Method == http.MethodHead},
	}
	if req.Method == http.MethodHead && len(body) > 0 {
		t.Errorf("openapi: HEAD %s answered a %d-byte body", req.URL.Path, len(body))
	}
	if resp.StatusCode == http.StatusNotModified {
		// kin-openapi validates no 304: check it here.
		c.checkNotModified(t, req, route, resp, body)
		return
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("openapi: %s %s answered %d %s %q, which the document does not allow: %v",
			req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Content-Type"), clip(body), err)
	}
}

// checkNotModified fails t unless the operation of route documents a 304,
// resp has every header the document requires of it, and no body.
func (c *Contract) checkNotModified(t testing.TB, req *http.Request, route *routers.Route, resp *http.Response, body []byte) {
	t.Helper()
	ref := route.Operation.Responses.Status(http.StatusNotModified)
	if ref == nil || ref.Value == nil {
		t.Errorf("openapi: %s %s answered 304, which the document does not allow", req.Method, req.URL.Path)
		return
	}
	for name, h := range ref.Value.Headers {
		if h.Value != nil && h.Value.Required && resp.Header.Get(name) == "" {
			t.Errorf("openapi: %s %s answered 304 without its %s header", req.Method, req.URL.Path, name)
		}
	}
	if len(body) > 0 {
		t.Errorf("openapi: %s %s answered 304 with a %d-byte body", req.Method, req.URL.Path, len(body))
	}
}

// CheckRefused fails t unless resp, whose body is body, is how the API
// answers a request it could not parse at all (before any route): 400 with
// the document's Error body, code 40002, a request id and a closed
// connection.
func (c *Contract) CheckRefused(t testing.TB, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusBadRequest || !resp.Close || resp.Header.Get("X-Request-ID") == "" {
		t.Errorf("openapi: an unparsable request answered %d (close %v, X-Request-ID %q) %q; want 400, closed, with a request id",
			resp.StatusCode, resp.Close, resp.Header.Get("X-Request-ID"), clip(body))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("openapi: an unparsable request answered with Content-Type %q", ct)
	}
	var v struct {
		Error int32 `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Error != 40002 {
		t.Errorf("openapi: an unparsable request answered %q; want the Error body with 40002", clip(body))
	}
	c.checkErrorSchema(t, resp.StatusCode, body)
}

// checkErrorSchema fails t unless body is the document's Error.
func (c *Contract) checkErrorSchema(t testing.TB, status int, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("openapi: %d body is not JSON: %q", status, clip(body))
		return
	}
	if err := c.doc.Components.Schemas["Error"].Value.VisitJSON(v); err != nil {
		t.Errorf("openapi: %d body %q is not an Error: %v", status, clip(body), err)
	}
}

// checkUnrouted validates a 404 or 405 against the document's shared responses.
func (c *Contract) checkUnrouted(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	name := map[int]string{http.StatusNotFound: "NotFound", http.StatusMethodNotAllowed: "MethodNotAllowed"}[resp.StatusCode]
	ref := c.doc.Components.Responses[name]
	if name == "" || ref == nil {
		t.Errorf("openapi: %s %s is not in the document and answered %d, want 404 or 405", req.Method, req.URL.Path, resp.StatusCode)
		return
	}
	for h, hr := range ref.Value.Headers {
		if hr.Value.Required && resp.Header.Get(h) == "" {
			t.Errorf("openapi: %d response lacks required header %s", resp.StatusCode, h)
		}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("openapi: %d response has Content-Type %q", resp.StatusCode, ct)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("openapi: %d body is not JSON: %q", resp.StatusCode, clip(body))
		return
	}
	schema := ref.Value.Content.Get("application/json").Schema.Value
	if err := schema.VisitJSON(v); err != nil {
		t.Errorf("openapi: %d body %q is not an Error: %v", resp.StatusCode, clip(body), err)
	}
}

// pathOnly is req with its URL cut to the path and query. The document's
// server is the relative URL "/", the service itself wherever it listens, so
// requests are routed by their path alone, as the service routes them.
func pathOnly(req *http.Request) *http.Request {
	u := *req.URL
	u.Scheme, u.Opaque, u.User, u.Host = "", "", nil, ""
	r := req.WithContext(req.Context())
	r.URL = &u
	return r
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// CheckWebhook fails t unless body is a delivery the document's webhooks
// section allows: a new plant (newPlant) or, when it has data, an event's
// envelope (plantEvent), each against the schema its request body refers
// to.
func (c *Contract) CheckWebhook(t testing.TB, body []byte) {
	t.Helper()
	c.CheckWebhookRequest(t, nil, body)
}

// CheckWebhookRequest is CheckWebhook that also holds header, when it is
// not nil, to the webhook's header parameters: each required one present
// once, and its value of the parameter's schema.
func (c *Contract) CheckWebhookRequest(t testing.TB, header http.Header, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("openapi: webhook body is not JSON: %q", clip(body))
		return
	}
	name := "newPlant"
	if m, ok := v.(map[string]any); ok && m["data"] != nil {
		name = "plantEvent"
	}
	item := c.doc.Webhooks[name]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil || item.Post.RequestBody.Value == nil {
		t.Fatalf("openapi: webhooks.%s has no POST with a request body", name)
	}
	mt := item.Post.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		t.Fatalf("openapi: webhooks.%s has no application/json body schema", name)
	}
	if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("openapi: webhook body %q is not %s's %s: %v", clip(body), name, mt.Schema.Ref, err)
	}
	if header == nil {
		return
	}
	for _, ref := range item.Post.Parameters {
		p := ref.Value
		if p == nil || p.In != openapi3.ParameterInHeader {
			continue
		}
		values := header.Values(p.Name)
		if len(values) == 0 {
			if p.Required {
				t.Errorf("openapi: webhooks.%s: a delivery without its %s header", name, p.Name)
			}
			continue
		}
		var value any = values[0]
		if p.Schema != nil && p.Schema.Value != nil && p.Schema.Value.Type.Is(openapi3.TypeInteger) {
			n, err := strconv.ParseInt(values[0], 10, 64)
			if err != nil {
				t.Errorf("openapi: webhooks.%s: %s %q is not an integer", name, p.Name, values[0])
				continue
			}
			value = n
		}
		if len(values) != 1 || p.Schema == nil || p.Schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020()) != nil {
			t.Errorf("openapi: webhooks.%s: %s %q is not one value of its schema", name, p.Name, values)
		}
	}
}
