package docs_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/plantstore/plantstore/docs"
)

// baseURL is empty: the document's server is relative, so requests are
// routed by their path, wherever the service listens.
const baseURL = ""

// contract loads the embedded document the way the service's clients and the
// HTTP tests do, and builds a router over it.
func contract(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	return doc, router
}

func TestDocumentIsValidOpenAPI(t *testing.T) {
	doc, _ := contract(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if doc.Info.Title != "Plant Store" || doc.Info.Version != "1.0.0" {
		t.Errorf("info = %q %q, want Plant Store 1.0.0", doc.Info.Title, doc.Info.Version)
	}
	if doc.Info.License == nil || doc.Info.License.Name != "MIT" {
		t.Errorf("license = %+v, want MIT", doc.Info.License)
	}
}

// The server is the service that serves the document, whatever its address,
// so that a client that loaded the document from the service, such as a page
// in a browser, sends its requests to that service.
func TestServerIsTheServingService(t *testing.T) {
	doc, router := contract(t)
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" || len(doc.Servers[0].Variables) != 0 {
		t.Fatalf("servers = %+v, want the one relative URL /", doc.Servers)
	}
	if _, _, err := router.FindRoute(newRequest(t, http.MethodPost, "/plants", "", "")); err != nil {
		t.Fatalf("POST /plants is not routed on the relative server: %v", err)
	}
}

// Every failure a client can meet must be described with the Error body and
// the request id, or response validation in the HTTP tests would let a wrong
// body through unnoticed.
func TestEveryErrorResponseIsAnErrorBody(t *testing.T) {
	doc, _ := contract(t)
	errSchema := doc.Components.Schemas["Error"].Value
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, status := range []int{404, 405, 500} {
				if op.Responses.Status(status) == nil {
					t.Errorf("%s %s: no %d response", method, path, status)
				}
			}
			for code, ref := range op.Responses.Map() {
				resp := ref.Value
				if resp.Headers["X-Request-ID"] == nil {
					t.Errorf("%s %s %s: no X-Request-ID header", method, path, code)
				}
				if strings.HasPrefix(code, "2") || code == "304" {
					continue
				}
				if method == http.MethodHead {
					continue // TestHeadAnswersAsGetWithoutBody
				}
				mt := resp.Content.Get("application/json")
				if mt == nil || mt.Schema == nil || mt.Schema.Value != errSchema {
					t.Errorf("%s %s %s: body is not the Error schema", method, path, code)
				}
			}
		}
	}
}

// A HEAD is answered with the status and headers of its GET and never a
// body: each HEAD operation documents the statuses of its GET with the same
// headers, and declares no body, so that a client generated from the
// document does not try to decode an Error that cannot come.
func TestHeadAnswersAsGetWithoutBody(t *testing.T) {
	doc, _ := contract(t)
	heads := 0
	for path, item := range doc.Paths.Map() {
		if item.Head == nil {
			continue
		}
		heads++
		if item.Get == nil {
			t.Errorf("HEAD %s: no GET", path)
			continue
		}
		get, head := item.Get.Responses.Map(), item.Head.Responses.Map()
		if len(get) != len(head) {
			t.Errorf("HEAD %s answers %d statuses, GET %d", path, len(head), len(get))
		}
		for code, ref := range get {
			h := head[code]
			if h == nil {
				t.Errorf("HEAD %s: no %s response, which GET has", path, code)
				continue
			}
			if len(h.Value.Content) != 0 {
				t.Errorf("HEAD %s %s: declares a body", path, code)
			}
			for name, hdr := range ref.Value.Headers {
				if hh := h.Value.Headers[name]; hh == nil || hh.Value != hdr.Value {
					t.Errorf("HEAD %s %s: header %s is not GET's", path, code, name)
				}
			}
			if len(h.Value.Headers) != len(ref.Value.Headers) {
				t.Errorf("HEAD %s %s: headers %d, GET's %d", path, code, len(h.Value.Headers), len(ref.Value.Headers))
			}
		}
	}
	if heads != 6 {
		t.Errorf("%d HEAD operations, want 6", heads)
	}
}

func TestErrorExamplesCoverTheErrorTable(t *testing.T) {
	doc, _ := contract(t)
	want := []int{40001, 40002, 40101, 40102, 40301, 40401, 40402, 40501, 40901, 41001, 41201, 41301, 41501, 50001, 50301}
	got := map[int]bool{}
	for _, ex := range doc.Components.Examples {
		if v, ok := ex.Value.Value.(map[string]any); ok {
			if code, ok := v["error"].(float64); ok {
				got[int(code)] = true
			}
		}
	}
	for _, code := range want {
		if !got[code] {
			t.Errorf("no Error example with code %d", code)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Error example codes = %v, want exactly %v", got, want)
	}
}

func TestCreatePlantRequests(t *testing.T) {
	_, router := contract(t)
	cases := []struct {
		name  string
		body  string
		valid bool
	}{
		{"name and tag", `{"id": 7, "name": "Monstera deliciosa", "tag": "aroid"}`, true},
		{"no tag", `{"id": -3, "name": "Saguaro"}`, true},
		{"null tag", `{"id": 1, "name": "Saguaro", "tag": null}`, true},
		{"white space kept around text", `{"id": 1, "name": "  fern  "}`, true},
		{"200 four-byte characters", `{"id": 1, "name": "` + strings.Repeat("🌵", 200) + `"}`, true},
		{"64 character tag", `{"id": 1, "name": "a", "tag": "` + strings.Repeat("é", 64) + `"}`, true},
		{"201 characters", `{"id": 1, "name": "` + strings.Repeat("a", 201) + `"}`, false},
		{"201 four-byte characters", `{"id": 1, "name": "` + strings.Repeat("🌵", 201) + `"}`, false},
		{"65 character tag", `{"id": 1, "name": "a", "tag": "` + strings.Repeat("t", 65) + `"}`, false},
		{"empty name", `{"id": 1, "name": ""}`, false},
		{"empty tag", `{"id": 1, "name": "a", "tag": ""}`, false},
		{"bell in name", `{"id": 1, "name": "a\u0007b"}`, false},
		{"tab in name", `{"id": 1, "name": "a\tb"}`, false},
		{"delete in tag", `{"id": 1, "name": "a", "tag": "x\u007f"}`, false},
		{"only spaces", `{"id": 1, "name": "   "}`, false},
		{"only no-break spaces", `{"id": 1, "name": "\u00a0\u3000"}`, false},
		{"only white space tag", `{"id": 1, "name": "a", "tag": " "}`, false},
		{"missing id", `{"name": "a"}`, false},
		{"missing name", `{"id": 1}`, false},
		{"id as string", `{"id": "7", "name": "a"}`, false},
		{"unknown field", `{"id": 1, "name": "a", "colour": "green"}`, false},
		{"field in another case", `{"id": 1, "Name": "a"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, http.MethodPost, "/plants", "application/json", tc.body)
			err := validateRequest(t, router, req)
			if tc.valid && err != nil {
				t.Errorf("want valid, got %v", err)
			}
			if !tc.valid && err == nil {
				t.Error("want invalid, got valid")
			}
		})
	}
}

func TestResponses(t *testing.T) {
	_, router := contract(t)
	const jsonCT = "application/json"
	plants := "/plants"
	etag := map[string]string{"ETag": `"q2b5Yh7J0m3uZx1cWf8a9Q"`}
	cases := []struct {
		name    string
		path    string
		method  string
		status  int
		ct      string
		headers map[string]string
		body    string
		valid   bool
	}{
		{"plant", plants, http.MethodPost, 200, jsonCT, etag, `{"name": "Monstera", "tag": "aroid"}`, true},
		{"plant without tag", plants, http.MethodPost, 200, jsonCT, etag, `{"name": "Monstera"}`, true},
		{"plant without ETag", plants, http.MethodPost, 200, jsonCT, nil, `{"name": "Monstera"}`, false},
		{"plant with a weak ETag", plants, http.MethodPost, 200, jsonCT, map[string]string{"ETag": `W/"q2b5Yh7J0m3uZx1cWf8a9Q"`}, `{"name": "Monstera"}`, false},
		{"plant with id", plants, http.MethodPost, 200, jsonCT, nil, `{"id": 7, "name": "Monstera"}`, false},
		{"plant with null tag", plants, http.MethodPost, 200, jsonCT, nil, `{"name": "Monstera", "tag": null}`, false},
		{"plant as text", plants, http.MethodPost, 200, "text/plain", nil, `Monstera`, false},
		{"bad request", plants, http.MethodPost, 400, jsonCT, nil, `{"error": 40002, "message": "name: must not be empty"}`, true},
		{"error without message", plants, http.MethodPost, 400, jsonCT, nil, `{"error": 40002}`, false},
		{"error with extra field", plants, http.MethodPost, 400, jsonCT, nil, `{"error": 40002, "message": "m", "detail": "x"}`, false},
		{"error code as string", plants, http.MethodPost, 400, jsonCT, nil, `{"error": "40002", "message": "m"}`, false},
		{"unauthorized with challenge", plants, http.MethodPost, 401,
			jsonCT, map[string]string{"WWW-Authenticate": `Bearer realm="plantstore"`},
			`{"error": 40101, "message": "a bearer token is required"}`, true},
		{"unauthorized without challenge", plants, http.MethodPost, 401, jsonCT, map[string]string{},
			`{"error": 40101, "message": "a bearer token is required"}`, false},
		{"forbidden", plants, http.MethodPost, 403,
			jsonCT, map[string]string{"WWW-Authenticate": `Bearer realm="plantstore", error="insufficient_scope", scope="plants:write"`},
			`{"error": 40301, "message": "insufficient scope"}`, true},
		{"method not allowed", plants, http.MethodPost, 405, jsonCT, map[string]string{"Allow": "POST"},
			`{"error": 40501, "message": "method not allowed"}`, true},
		{"method not allowed without Allow", plants, http.MethodPost, 405, jsonCT, map[string]string{},
			`{"error": 40501, "message": "method not allowed"}`, false},
		{"conflict", plants, http.MethodPost, 409, jsonCT, nil, `{"error": 40901, "message": "conflict"}`, true},
		{"unavailable", plants, http.MethodPost, 503, jsonCT, map[string]string{"Retry-After": "1"},
			`{"error": 50301, "message": "unavailable"}`, true},
		{"unavailable without Retry-After", plants, http.MethodPost, 503, jsonCT, map[string]string{},
			`{"error": 50301, "message": "unavailable"}`, false},
		{"undocumented status", plants, http.MethodPost, 418, jsonCT, nil, `{"error": 41801, "message": "teapot"}`, false},
		{"document", "/openapi.yaml", http.MethodGet, 200, "application/yaml", nil, string(docs.OpenAPI), true},
		{"document fault", "/openapi.yaml", http.MethodGet, 500, jsonCT, nil, `{"error": 50001, "message": "r1"}`, true},
		{"reference page", "/docs", http.MethodGet, 200, "text/html; charset=utf-8",
			map[string]string{"Content-Security-Policy": "default-src 'self'"}, `<!DOCTYPE html>`, true},
		{"reference page without its policy", "/docs", http.MethodGet, 200, "text/html; charset=utf-8", nil, `<!DOCTYPE html>`, false},
		{"reference page as JSON", "/docs", http.MethodGet, 200, jsonCT,
			map[string]string{"Content-Security-Policy": "default-src 'self'"}, `{}`, false},
		{"reference script", "/docs/swagger-ui-bundle.js", http.MethodGet, 200, "text/javascript; charset=utf-8", nil, `"use strict";`, true},
		{"reference style sheet", "/docs/swagger-ui.css", http.MethodGet, 200, "text/css; charset=utf-8", nil, `body{}`, true},
		{"reference icon", "/docs/favicon-16x16.png", http.MethodGet, 200, "image/png", nil, "\x89PNG", true},
		{"reference file as JSON", "/docs/swagger-ui.css", http.MethodGet, 200, jsonCT, nil, `{}`, false},
		{"no such reference file", "/docs/nope.js", http.MethodGet, 404, jsonCT, nil, `{"error": 40401, "message": "no such route"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, tc.method, tc.path, "", "")
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatalf("find route: %v", err)
			}
			header := http.Header{"Content-Type": {tc.ct}, "X-Request-Id": {"r1"}}
			for k, v := range tc.headers {
				header.Set(k, v)
			}
			err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
				RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
				Status:                 tc.status,
				Header:                 header,
				Body:                   io.NopCloser(strings.NewReader(tc.body)),
				Options:                &openapi3filter.Options{IncludeResponseStatus: true},
			})
			if tc.valid && err != nil {
				t.Errorf("want valid, got %v", err)
			}
			if !tc.valid && err == nil {
				t.Error("want invalid, got valid")
			}
		})
	}
}

func TestResponseWithoutRequestIDIsInvalid(t *testing.T) {
	_, router := contract(t)
	req := newRequest(t, http.MethodPost, "/plants", "", "")
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("find route: %v", err)
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 200,
		Header:                 http.Header{"Content-Type": {"application/json"}, "Etag": {`"q2b5Yh7J0m3uZx1cWf8a9Q"`}},
		Body:                   io.NopCloser(strings.NewReader(`{"name": "Monstera"}`)),
	})
	if err == nil {
		t.Error("a response without X-Request-ID validated")
	}
}

func newRequest(t *testing.T, method, path, contentType, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, baseURL+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

func validateRequest(t *testing.T, router routers.Router, req *http.Request) error {
	t.Helper()
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("find route: %v", err)
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: params,
		Route:      route,
		Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
}

// Every request body a client may send has an example under each of its
// media types: the reference page fills the body from it, and tools that
// send the document's examples (Dredd) would otherwise make one up from the
// schema alone, which breaks its rules (an empty name).
func TestEveryRequestBodyHasAnExample(t *testing.T) {
	doc, _ := contract(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil {
				continue
			}
			for mediaType, mt := range op.RequestBody.Value.Content {
				if mt.Example == nil && len(mt.Examples) == 0 {
					t.Errorf("%s %s: the %s body has no example", method, path, mediaType)
				}
			}
		}
	}
}

// The webhooks section (OpenAPI 3.1) declares both payloads: newPlant, the
// plant's body, and plantEvent, an event's envelope whose data is the
// feed's Event, each a POST with the three Standard Webhooks headers,
// required, the same for both.
func TestWebhooksDeclareBothPayloads(t *testing.T) {
	doc, _ := contract(t)
	if len(doc.Extensions) > 0 && doc.Extensions["x-webhooks"] != nil {
		t.Error("x-webhooks is left: the webhooks section replaces it")
	}
	bodies := map[string]string{"newPlant": "#/components/schemas/PlantItem", "plantEvent": "#/components/schemas/EventEnvelope"}
	if len(doc.Webhooks) != len(bodies) {
		t.Fatalf("webhooks %v; want %v", doc.Webhooks, bodies)
	}
	for name, body := range bodies {
		item := doc.Webhooks[name]
		if item == nil || item.Post == nil || len(item.Operations()) != 1 {
			t.Fatalf("webhooks.%s: want one POST", name)
		}
		mt := item.Post.RequestBody.Value.Content.Get("application/json")
		if mt == nil || mt.Schema.Ref != body {
			t.Errorf("webhooks.%s: body %+v; want %s", name, mt, body)
		}
		var headers []string
		for _, p := range item.Post.Parameters {
			if p.Value.In == openapi3.ParameterInHeader && p.Value.Required {
				headers = append(headers, p.Value.Name)
			}
		}
		if strings.Join(headers, " ") != "webhook-id webhook-timestamp webhook-signature" {
			t.Errorf("webhooks.%s: required headers %v", name, headers)
		}
	}
	envelope := doc.Components.Schemas["EventEnvelope"].Value
	if data := envelope.Properties["data"]; data == nil || data.Value != doc.Components.Schemas["Event"].Value {
		t.Errorf("EventEnvelope.data is not the Event")
	}
	if strings.Join(envelope.Required, " ") != "type timestamp data" {
		t.Errorf("EventEnvelope requires %v", envelope.Required)
	}
}
