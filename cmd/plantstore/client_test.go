package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/client"
)

// The generated Go client, as a caller uses it, against the wired service on
// each store: the conditional change and delete are checked atomically by
// the store, so they run on both, and a HEAD of an absent plant decodes.
func TestClientEndToEnd(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
		ctx := context.Background()
		c := s.apiClient(t, s.token(t, nil))
		created, err := c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: 11, Name: "Fern", Tag: ptr("shade")})
		if err != nil || created.StatusCode() != 200 || created.JSON200.Name != "Fern" {
			t.Fatalf("create: %v %v", created, err)
		}
		etag := created.Headers200.ETag
		replayed, err := c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: 11, Name: "Fern", Tag: ptr("shade")})
		if err != nil || replayed.StatusCode() != 200 || replayed.Headers200.ETag != etag {
			t.Fatalf("replay: %v %v", replayed, err)
		}
		conflict, err := c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: 11, Name: "Moss"})
		if err != nil || conflict.StatusCode() != 409 || conflict.JSON409.Error != client.ErrorErrorConflict {
			t.Fatalf("conflict: %v %v", conflict, err)
		}
		unchanged, err := c.GetPlantWithResponse(ctx, 11, &client.GetPlantParams{IfNoneMatch: &etag})
		if err != nil || unchanged.StatusCode() != 304 || unchanged.Headers304.ETag != etag {
			t.Fatalf("read if none match: %v %v", unchanged, err)
		}
		changed, err := c.ChangePlantWithResponse(ctx, 11, &client.ChangePlantParams{IfMatch: &etag}, client.PlantPatch{Name: ptr("Maidenhair fern")})
		if err != nil || changed.StatusCode() != 200 || changed.JSON200.Name != "Maidenhair fern" {
			t.Fatalf("change: %v %v", changed, err)
		}
		stale, err := c.ChangePlantWithResponse(ctx, 11, &client.ChangePlantParams{IfMatch: &etag}, client.PlantPatch{Name: ptr("Moss")})
		if err != nil || stale.StatusCode() != 412 || stale.JSON412.Error != client.ErrorErrorPreconditionFailed {
			t.Fatalf("stale change: %v %v", stale, err)
		}
		page, err := c.ListPlantsWithResponse(ctx, &client.ListPlantsParams{Tag: ptr("shade")})
		if err != nil || page.StatusCode() != 200 || len(*page.JSON200) != 1 || (*page.JSON200)[0].Name != "Maidenhair fern" {
			t.Fatalf("list: %v %v", page, err)
		}
		// A token signed by the key of the PEM file, with the read scope only.
		reader := s.apiClient(t, s.sign(t, jwt.SigningMethodEdDSA, s.pemKey, jwt.MapClaims{"scope": "plants:read"}))
		refused, err := reader.DeletePlantWithResponse(ctx, 11, nil)
		if err != nil || refused.StatusCode() != 403 || refused.JSON403.Error != client.ErrorErrorInsufficientScope {
			t.Fatalf("delete without the scope: %v %v", refused, err)
		}
		staleDelete, err := c.DeletePlantWithResponse(ctx, 11, &client.DeletePlantParams{IfMatch: &etag})
		if err != nil || staleDelete.StatusCode() != 412 {
			t.Fatalf("stale delete: %v %v", staleDelete, err)
		}
		deleted, err := c.DeletePlantWithResponse(ctx, 11, &client.DeletePlantParams{IfMatch: &changed.Headers200.ETag})
		if err != nil || deleted.StatusCode() != 204 {
			t.Fatalf("delete: %v %v", deleted, err)
		}
		gone, err := reader.HeadPlantWithResponse(ctx, 11, nil)
		if err != nil || gone.StatusCode() != 404 || gone.Headers404 == nil {
			t.Fatalf("head after delete: %v %v", gone, err)
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
