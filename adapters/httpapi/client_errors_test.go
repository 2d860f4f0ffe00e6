package httpapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/client"
)

// clientCall is one operation sent with the generated client.
type clientCall struct {
	name  string
	head  bool // a HEAD: the answer has no body
	write bool // needs plants:write, not plants:read
	call  func(ctx context.Context, c *client.ClientWithResponses) (any, error)
}

// plantCalls are the operations that need a token, one call each, on the
// plant with id 1.
var plantCalls = []clientCall{
	{"create", false, true, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
		return c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: 2, Name: "Basil"})
	}},
	{"read", false, false, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
		return c.GetPlantWithResponse(ctx, 1, nil)
	}},
	{"head", true, false, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
		return c.HeadPlantWithResponse(ctx, 1, nil)
	}},
	{"list", false, false, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
		return c.ListPlantsWithResponse(ctx, nil)
	}},
	{"head list", true, false, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
		return c.HeadListPlantsWithResponse(ctx, nil)
	}},
	{"change", false, true, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
		return c.ChangePlantWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, 1, nil, client.PlantPatch{Name: ptr("Sage")})
	}},
	{"delete", false, true, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
		return c.DeletePlantWithResponse(ctx, 1, nil)
	}},
}

// Every operation that needs a token refuses a request without one, with a
// refused one or without its scope: the client decodes the Error, or, to a
// HEAD, the status and the WWW-Authenticate challenge without a body.
func TestClientRefusals(t *testing.T) {
	s := startServer(t, withStore(seededStore(t)))
	for _, op := range plantCalls {
		other := "plants:write"
		if op.write {
			other = "plants:read"
		}
		for _, r := range []struct {
			name   string
			token  string
			status int
			code   client.ErrorError
		}{
			{"no token", "", 401, client.ErrorErrorMissingToken},
			{"expired token", s.keys.Expired(t), 401, client.ErrorErrorInvalidToken},
			{"token of another key", s.keys.UnknownKey(t), 401, client.ErrorErrorInvalidToken},
			{"without the scope", s.keys.Scoped(t, other), 403, client.ErrorErrorInsufficientScope},
		} {
			t.Run(op.name+" "+r.name, func(t *testing.T) {
				got, err := op.call(t.Context(), s.apiClient(t, r.token))
				d := decode(t, got, err)
				d.expectError(t, op.head, r.status, r.code)
				if ch := d.header("WWWAuthenticate"); !strings.HasPrefix(ch, `Bearer realm="plantstore"`) {
					t.Errorf("WWW-Authenticate %q", ch)
				}
			})
		}
	}
	s.expectHealthy(t)
}

// Requests the API cannot take: a body that is not JSON or breaks a rule
// (400), a parameter out of range (400, to HEAD too), a body over the limit
// (413) and a body of another type (415).
func TestClientBadRequests(t *testing.T) {
	s := startServer(t, withStore(seededStore(t)), withMaxBody(256))
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name   string
		head   bool
		status int
		code   client.ErrorError
		call   func(ctx context.Context, c *client.ClientWithResponses) (any, error)
	}{
		{"create malformed", false, 400, client.ErrorErrorMalformedBody, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.CreatePlantWithBodyWithResponse(ctx, nil, "application/json", strings.NewReader(`{"id":2,`))
		}},
		{"create without a name", false, 400, client.ErrorErrorInvalidField, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: 2})
		}},
		{"change to an empty name", false, 400, client.ErrorErrorInvalidField, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.ChangePlantWithResponse(ctx, 1, nil, client.PlantPatch{Name: ptr("")})
		}},
		{"list with limit 0", false, 400, client.ErrorErrorInvalidField, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.ListPlantsWithResponse(ctx, &client.ListPlantsParams{Limit: ptr[int32](0)})
		}},
		{"head list with limit 1001", true, 400, 0, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.HeadListPlantsWithResponse(ctx, &client.HeadListPlantsParams{Limit: ptr[int32](1001)})
		}},
		{"create too large", false, 413, client.ErrorErrorBodyTooLarge, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: 2, Name: long})
		}},
		{"change too large", false, 413, client.ErrorErrorBodyTooLarge, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.ChangePlantWithResponse(ctx, 1, nil, client.PlantPatch{Name: &long})
		}},
		{"create as text", false, 415, client.ErrorErrorUnsupportedMediaType, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.CreatePlantWithBodyWithResponse(ctx, nil, "text/plain", strings.NewReader(`{"id":2,"name":"Basil"}`))
		}},
		{"change as text", false, 415, client.ErrorErrorUnsupportedMediaType, func(ctx context.Context, c *client.ClientWithResponses) (any, error) {
			return c.ChangePlantWithBodyWithResponse(ctx, 1, nil, "text/plain", strings.NewReader(`{"name":"Sage"}`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.call(t.Context(), s.apiClient(t, s.token(t, nil)))
			decode(t, got, err).expectError(t, tc.head, tc.status, tc.code)
		})
	}
	s.expectHealthy(t)
}

// A failing store is answered with 503 and Retry-After, or 500, to every
// plant operation; the client decodes the Error, or to a HEAD the headers.
func TestClientStoreFaults(t *testing.T) {
	for _, f := range []struct {
		name   string
		fault  error
		status int
		code   client.ErrorError
	}{
		{"unavailable", fmt.Errorf("pool: %w", application.ErrUnavailable), 503, client.ErrorErrorUnavailable},
		{"fault", errors.New("disk on fire"), 500, client.ErrorErrorInternalError},
	} {
		store := seededStore(t)
		store.Inject(func() error { return f.fault })
		s := startServer(t, withStore(store))
		for _, op := range plantCalls {
			t.Run(op.name+" "+f.name, func(t *testing.T) {
				got, err := op.call(t.Context(), s.apiClient(t, s.token(t, nil)))
				d := decode(t, got, err)
				d.expectError(t, op.head, f.status, f.code)
				if f.status == 503 && d.headers.FieldByName("RetryAfter").Int() < 1 {
					t.Errorf("Retry-After %v, want at least a second", d.headers.FieldByName("RetryAfter"))
				}
			})
		}
	}
}

// The documentation operations: the document, the reference page and its
// files, each by GET and by HEAD, and a file that is not there (404).
func TestClientDocumentation(t *testing.T) {
	s := startServer(t)
	c := s.apiClient(t, "")
	ctx := context.Background()
	doc, err := c.GetOpenAPIWithResponse(ctx, nil)
	if decode(t, doc, err); doc.StatusCode() != 200 || !strings.HasPrefix(string(doc.Body), "openapi: 3.0.3") {
		t.Fatalf("document: %d %.40q", doc.StatusCode(), doc.Body)
	}
	headDoc, err := c.HeadOpenAPIWithResponse(ctx, nil)
	if decode(t, headDoc, err); headDoc.StatusCode() != 200 || len(headDoc.Body) != 0 {
		t.Fatalf("head document: %d", headDoc.StatusCode())
	}
	page, err := c.GetReferenceWithResponse(ctx, nil)
	if decode(t, page, err); page.StatusCode() != 200 || page.Headers200.ContentSecurityPolicy == "" || !strings.Contains(string(page.Body), "<html") {
		t.Fatalf("reference: %d %.40q", page.StatusCode(), page.Body)
	}
	headPage, err := c.HeadReferenceWithResponse(ctx, nil)
	if decode(t, headPage, err); headPage.StatusCode() != 200 || headPage.Headers200.ContentSecurityPolicy != page.Headers200.ContentSecurityPolicy {
		t.Fatalf("head reference: %d", headPage.StatusCode())
	}
	asset, err := c.GetReferenceAssetWithResponse(ctx, client.GetReferenceAssetParamsAssetReferenceJs, nil)
	if decode(t, asset, err); asset.StatusCode() != 200 || len(asset.Body) == 0 {
		t.Fatalf("reference.js: %d", asset.StatusCode())
	}
	headAsset, err := c.HeadReferenceAssetWithResponse(ctx, client.HeadReferenceAssetParamsAssetSwaggerUiCss, nil)
	if decode(t, headAsset, err); headAsset.StatusCode() != 200 || len(headAsset.Body) != 0 {
		t.Fatalf("head swagger-ui.css: %d", headAsset.StatusCode())
	}
	missing, err := c.GetReferenceAssetWithResponse(ctx, "nope.js", nil)
	decode(t, missing, err).expectError(t, false, 404, client.ErrorErrorNoSuchRoute)
	headMissing, err := c.HeadReferenceAssetWithResponse(ctx, "nope.js", nil)
	decode(t, headMissing, err).expectError(t, true, 404, 0)
}
