package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/client"
)

// Each store, wired into the whole service, serves every plant operation end
// to end, the conditional ones through the generated Go client as a caller
// uses it, and answers the admin listener's probes and metrics. The HTTP
// contract itself is tested in adapters/httpapi on the memory store, and
// what the stores guarantee (the preconditions' atomicity across two stores
// on one database too) by the store suite, adapters/storetest.
func TestEachStoreEndToEnd(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
		created := s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`)
		created.expect(t, 200, `{"name":"Fern","tag":"shade"}`)
		s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expect(t, 200, `{"name":"Fern","tag":"shade"}`)
		s.create(t, `{"id":5,"name":"Moss"}`).expectError(t, 409, "40901")
		// A token signed by the key of the PEM file is verified as well.
		s.do(t, "POST", "/plants", map[string]string{
			"Authorization": "Bearer " + s.keys.Sign(t, jwt.SigningMethodEdDSA, s.keys.Ed, nil), "Content-Type": "application/json",
		}, []byte(`{"id":-7,"name":"Aloe"}`)).expect(t, 200, `{"name":"Aloe"}`)
		s.do(t, "POST", "/plants", nil, nil).expectError(t, 401, "40101")

		s.call(t, "GET", "/plants/5").expect(t, 200, `{"id":5,"name":"Fern","tag":"shade"}`)
		first := s.call(t, "GET", "/plants?limit=1")
		first.expect(t, 200, `[{"id":-7,"name":"Aloe"}]`)
		if link := first.header.Get("Link"); link != `</plants?limit=1&after=-7>; rel="next"` {
			t.Fatalf("first page Link %q", link)
		}
		s.call(t, "GET", "/plants?limit=1&after=-7").expect(t, 200, `[{"id":5,"name":"Fern","tag":"shade"}]`)

		ctx, etag := context.Background(), created.header.Get("ETag")
		c := s.apiClient(t, s.token(t, nil))
		if r, err := c.GetPlantWithResponse(ctx, 5, &client.GetPlantParams{IfNoneMatch: &etag}); err != nil || r.StatusCode() != 304 || r.Headers304.ETag != etag {
			t.Fatalf("read if none match %q: %v %v", etag, r, err)
		}
		changed, err := c.ChangePlantWithResponse(ctx, 5, &client.ChangePlantParams{IfMatch: &etag}, client.PlantPatch{Name: ptr("Moss")})
		if err != nil || changed.StatusCode() != 200 || changed.JSON200.Name != "Moss" || *changed.JSON200.Tag != "shade" {
			t.Fatalf("change: %v %v", changed, err)
		}
		if r, err := c.ChangePlantWithResponse(ctx, 5, &client.ChangePlantParams{IfMatch: &etag}, client.PlantPatch{}); err != nil || r.StatusCode() != 412 {
			t.Fatalf("change with a stale ETag: %v %v", r, err)
		}
		// A replay compares with the plant as it is now.
		s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expectError(t, 409, "40901")
		if r := s.create(t, `{"id":5,"name":"Moss","tag":"shade"}`); r.status != 200 || r.header.Get("ETag") != changed.Headers200.ETag {
			t.Fatalf("replay of the changed plant: %d ETag %q", r.status, r.header.Get("ETag"))
		}
		s.call(t, "GET", "/plants?tag=shade").expect(t, 200, `[{"id":5,"name":"Moss","tag":"shade"}]`)
		reader := s.apiClient(t, s.keys.Sign(t, jwt.SigningMethodEdDSA, s.keys.Ed, jwt.MapClaims{"scope": "plants:read"}))
		if r, err := reader.DeletePlantWithResponse(ctx, 5, nil); err != nil || r.StatusCode() != 403 {
			t.Fatalf("delete without the scope: %v %v", r, err)
		}
		if r, err := c.DeletePlantWithResponse(ctx, 5, &client.DeletePlantParams{IfMatch: &etag}); err != nil || r.StatusCode() != 412 {
			t.Fatalf("delete with a stale ETag: %v %v", r, err)
		}
		if r, err := c.DeletePlantWithResponse(ctx, 5, &client.DeletePlantParams{IfMatch: &changed.Headers200.ETag}); err != nil || r.StatusCode() != 204 {
			t.Fatalf("delete: %v %v", r, err)
		}
		if r, err := reader.HeadPlantWithResponse(ctx, 5, nil); err != nil || r.StatusCode() != 404 {
			t.Fatalf("HEAD after the delete: %v %v", r, err)
		}
		s.call(t, "DELETE", "/plants/5").expectError(t, 404, "40402")
		s.create(t, `{"id":5,"name":"Ivy"}`).expect(t, 200, `{"name":"Ivy"}`)

		s.adminGet(t, "/healthz").expect(t, 200, "")
		s.adminGet(t, "/readyz").expect(t, 200, "")
		m := s.adminGet(t, "/metrics").body
		for _, want := range []string{
			`plantstore_plant_operations_total{operation="create",outcome="created"} 3`,
			`plantstore_plant_operations_total{operation="create",outcome="replayed"} 2`,
			`plantstore_plant_operations_total{operation="create",outcome="conflict"} 2`,
			`plantstore_plant_operations_total{operation="change",outcome="changed"} 1`,
			`plantstore_plant_operations_total{operation="change",outcome="precondition_failed"} 1`,
			`plantstore_plant_operations_total{operation="delete",outcome="precondition_failed"} 1`,
			`plantstore_auth_failures_total{reason="missing"} 1`,
			`plantstore_build_info{`,
			`go_goroutines`,
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})
}

// apiClient is a generated client of the service that sends token, each
// answer checked against the OpenAPI document.
func (s *service) apiClient(t *testing.T, token string) *client.ClientWithResponses {
	t.Helper()
	checked := doerFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		s.contract.Check(t, req, resp, b)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return resp, err
	})
	c, err := client.NewClientWithResponses(s.api, client.WithHTTPClient(checked), client.WithBearerToken(token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// doerFunc is a function that sends HTTP requests.
type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

func ptr[T any](v T) *T { return &v }
