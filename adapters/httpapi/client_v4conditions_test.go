package httpapi

import (
	"context"
	"errors"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/plantstore/plantstore/client"
	"github.com/plantstore/plantstore/docs"
)

// The conditions v4 adds (PRODUCT.md §10, the rest of RFC 9110 §13):
// If-None-Match on a change and a delete, If-Match on a read, If-Match
// first when both are sent. The client sends any condition on any method;
// each pair is checked against the served API, whose document declares the
// header on the operation (the harness validates every answer against it).
func TestClientConditionsOfV4(t *testing.T) {
	ctx := context.Background()
	s := startServer(t)
	c, _ := s.plantClient(t, s.token(t, nil))
	fresh := func(t *testing.T) client.Plant {
		t.Helper()
		_ = c.Delete(ctx, 7)
		p, err := c.Create(ctx, client.NewPlant{ID: 7, Name: "Monstera deliciosa", Tag: "aroid"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, method, header string
		run                  func(t *testing.T, p client.Plant)
	}{
		{"change if none match", "PATCH", "If-None-Match", func(t *testing.T, p client.Plant) {
			_, err := c.Change(ctx, 7, client.Patch{}.SetName("Sage"), client.IfNoneMatch(p.ETag))
			apiError(t, err, 412, client.CodePreconditionFailed, client.ErrPreconditionFailed)
			_, err = c.Change(ctx, 7, client.Patch{}.SetName("Sage"), client.IfNoneMatch(client.AnyETag))
			apiError(t, err, 412, client.CodePreconditionFailed, client.ErrPreconditionFailed)
			if got, err := c.Get(ctx, 7); err != nil || got != p {
				t.Fatalf("after refused changes: %+v %v, want %+v", got, err, p)
			}
			if got, err := c.Change(ctx, 7, client.Patch{}.SetName("Sage"), client.IfNoneMatch(`"other"`)); err != nil || got.Name != "Sage" {
				t.Fatalf("change if none match another ETag: %+v %v", got, err)
			}
		}},
		{"delete if none match", "DELETE", "If-None-Match", func(t *testing.T, p client.Plant) {
			apiError(t, c.Delete(ctx, 7, client.IfNoneMatch(p.ETag)), 412, client.CodePreconditionFailed, client.ErrPreconditionFailed)
			if got, err := c.Get(ctx, 7); err != nil || got != p {
				t.Fatalf("after a refused delete: %+v %v", got, err)
			}
			if err := c.Delete(ctx, 7, client.IfNoneMatch(`"other"`)); err != nil {
				t.Fatalf("delete if none match another ETag: %v", err)
			}
		}},
		{"read if match", "GET", "If-Match", func(t *testing.T, p client.Plant) {
			_, err := c.Get(ctx, 7, client.IfMatch(`"other"`))
			apiError(t, err, 412, client.CodePreconditionFailed, client.ErrPreconditionFailed)
			// If-Match is evaluated first: a 412, not a 304.
			_, err = c.Get(ctx, 7, client.IfMatch(`"other"`), client.IfNoneMatch(p.ETag))
			apiError(t, err, 412, client.CodePreconditionFailed, client.ErrPreconditionFailed)
			for _, etag := range []string{p.ETag, client.AnyETag} {
				if got, err := c.Get(ctx, 7, client.IfMatch(etag)); err != nil || got != p {
					t.Fatalf("read if match %s: %+v %v", etag, got, err)
				}
			}
			if _, err := c.Get(ctx, 7, client.IfMatch(p.ETag), client.IfNoneMatch(p.ETag)); !errors.Is(err, client.ErrNotModified) {
				t.Fatalf("read if match and if none match: %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !declaresHeader(t, tc.method, "/plants/{id}", tc.header) {
				t.Fatalf("docs/openapi.yaml does not declare %s on %s /plants/{id}", tc.header, tc.method)
			}
			tc.run(t, fresh(t))
		})
	}
}

// declaresHeader reports whether the document declares the header
// parameter on the operation method path.
func declaresHeader(t *testing.T, method, path, header string) bool {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	item := doc.Paths.Value(path)
	if item == nil || item.GetOperation(method) == nil {
		t.Fatalf("the document has no %s %s", method, path)
	}
	params := append(item.Parameters, item.GetOperation(method).Parameters...)
	for _, p := range params {
		if p.Value != nil && p.Value.In == openapi3.ParameterInHeader && p.Value.Name == header {
			return true
		}
	}
	return false
}
