package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/plantstore/plantstore/client"
)

// The generated client creates, replays, reads, lists, changes and deletes a
// plant, with ETags and conditional requests, and decodes each documented
// answer: the plant, the 304, the 404, the 409 and the 412.
func TestClientPlantOperations(t *testing.T) {
	ctx := context.Background()
	s := startServer(t)
	c := s.apiClient(t, s.token(t, nil))
	plant := client.NewPlant{Id: 7, Name: "Monstera deliciosa", Tag: newPlantTag(t, "aroid")}

	created, err := c.CreatePlantWithResponse(ctx, nil, plant)
	decode(t, created, err)
	if created.StatusCode() != 200 || created.JSON200 == nil || created.JSON200.Name != plant.Name || *created.JSON200.Tag != "aroid" {
		t.Fatalf("create: %d %s", created.StatusCode(), created.Body)
	}
	etag := created.Headers200.ETag
	replayed, err := c.CreatePlantWithResponse(ctx, &client.CreatePlantParams{XRequestID: ptr("replay-7")}, plant)
	decode(t, replayed, err)
	if replayed.StatusCode() != 200 || replayed.JSON200.Name != plant.Name || replayed.Headers200.ETag != etag || replayed.Headers200.XRequestID != "replay-7" {
		t.Fatalf("replay: %d %s %+v", replayed.StatusCode(), replayed.Body, replayed.Headers200)
	}
	conflict, err := c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: 7, Name: "Monstera adansonii"})
	decode(t, conflict, err).expectError(t, false, 409, client.ErrorErrorConflict)

	got, err := c.GetPlantWithResponse(ctx, 7, nil)
	decode(t, got, err)
	if got.StatusCode() != 200 || got.JSON200 == nil || got.JSON200.Id != 7 || got.JSON200.Name != plant.Name || got.Headers200.ETag != etag {
		t.Fatalf("read: %d %s", got.StatusCode(), got.Body)
	}
	unchanged, err := c.GetPlantWithResponse(ctx, 7, &client.GetPlantParams{IfNoneMatch: &etag})
	if decode(t, unchanged, err); unchanged.StatusCode() != 304 || unchanged.Headers304.ETag != etag || len(unchanged.Body) != 0 {
		t.Fatalf("read if none match: %d %q", unchanged.StatusCode(), unchanged.Body)
	}
	head, err := c.HeadPlantWithResponse(ctx, 7, nil)
	if decode(t, head, err); head.StatusCode() != 200 || head.Headers200.ETag != etag || len(head.Body) != 0 {
		t.Fatalf("head: %d %q", head.StatusCode(), head.Body)
	}
	headUnchanged, err := c.HeadPlantWithResponse(ctx, 7, &client.HeadPlantParams{IfNoneMatch: &etag})
	if decode(t, headUnchanged, err); headUnchanged.StatusCode() != 304 || headUnchanged.Headers304.ETag != etag {
		t.Fatalf("head if none match: %d", headUnchanged.StatusCode())
	}

	for _, id := range []int64{8, 9} {
		r, err := c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: id, Name: "Fern"})
		if decode(t, r, err); r.StatusCode() != 200 {
			t.Fatalf("create %d: %d", id, r.StatusCode())
		}
	}
	page, err := c.ListPlantsWithResponse(ctx, &client.ListPlantsParams{Limit: ptr[int32](10), Tag: ptr("aroid")})
	if decode(t, page, err); page.StatusCode() != 200 || page.JSON200 == nil || len(*page.JSON200) != 1 || (*page.JSON200)[0].Id != 7 {
		t.Fatalf("list by tag: %d %s", page.StatusCode(), page.Body)
	}
	first, err := c.ListPlantsWithResponse(ctx, &client.ListPlantsParams{Limit: ptr[int32](2)})
	if decode(t, first, err); first.StatusCode() != 200 || len(*first.JSON200) != 2 || deref(first.Headers200.Link) != `</plants?limit=2&after=8>; rel="next"` {
		t.Fatalf("first page: %d %s %+v", first.StatusCode(), first.Body, first.Headers200)
	}
	last, err := c.ListPlantsWithResponse(ctx, &client.ListPlantsParams{Limit: ptr[int32](2), After: ptr[int64](8)})
	if decode(t, last, err); last.StatusCode() != 200 || len(*last.JSON200) != 1 || (*last.JSON200)[0].Id != 9 || last.Headers200.Link != nil {
		t.Fatalf("last page: %d %s %+v", last.StatusCode(), last.Body, last.Headers200)
	}
	headPage, err := c.HeadListPlantsWithResponse(ctx, &client.HeadListPlantsParams{Limit: ptr[int32](2)})
	if decode(t, headPage, err); headPage.StatusCode() != 200 || deref(headPage.Headers200.Link) != deref(first.Headers200.Link) || len(headPage.Body) != 0 {
		t.Fatalf("head list: %d %+v", headPage.StatusCode(), headPage.Headers200)
	}

	// Changes, as application/json and as a merge patch; If-Match guards them.
	changed, err := c.ChangePlantWithResponse(ctx, 7, &client.ChangePlantParams{IfMatch: &etag}, client.PlantPatch{Name: ptr("Monstera adansonii")})
	decode(t, changed, err)
	if changed.StatusCode() != 200 || changed.JSON200 == nil || changed.JSON200.Name != "Monstera adansonii" || *changed.JSON200.Tag != "aroid" || changed.Headers200.ETag == etag {
		t.Fatalf("change: %d %s", changed.StatusCode(), changed.Body)
	}
	stale, err := c.ChangePlantWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, 7, &client.ChangePlantParams{IfMatch: &etag}, client.PlantPatch{Tag: patchTag(t, "vine")})
	decode(t, stale, err).expectError(t, false, 412, client.ErrorErrorPreconditionFailed)
	etag = changed.Headers200.ETag
	patched, err := c.ChangePlantWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, 7, &client.ChangePlantParams{IfMatch: &etag}, client.PlantPatch{Tag: patchTag(t, "vine")})
	if decode(t, patched, err); patched.StatusCode() != 200 || *patched.JSON200.Tag != "vine" {
		t.Fatalf("merge patch: %d %s", patched.StatusCode(), patched.Body)
	}
	// A merge patch's null removes the tag.
	untagged, err := c.ChangePlantWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, 7, nil, client.PlantPatch{Tag: patchTag(t, "")})
	if decode(t, untagged, err); untagged.StatusCode() != 200 || untagged.JSON200.Tag != nil {
		t.Fatalf("merge patch null: %d %s", untagged.StatusCode(), untagged.Body)
	}
	absent, err := c.ChangePlantWithResponse(ctx, 70, nil, client.PlantPatch{Name: ptr("Sage")})
	decode(t, absent, err).expectError(t, false, 404, client.ErrorErrorNoSuchPlant)

	staleDelete, err := c.DeletePlantWithResponse(ctx, 7, &client.DeletePlantParams{IfMatch: &etag})
	decode(t, staleDelete, err).expectError(t, false, 412, client.ErrorErrorPreconditionFailed)
	deleted, err := c.DeletePlantWithResponse(ctx, 7, &client.DeletePlantParams{IfMatch: &untagged.Headers200.ETag})
	if decode(t, deleted, err); deleted.StatusCode() != http.StatusNoContent {
		t.Fatalf("delete: %d %s", deleted.StatusCode(), deleted.Body)
	}
	gone, err := c.GetPlantWithResponse(ctx, 7, nil)
	decode(t, gone, err).expectError(t, false, 404, client.ErrorErrorNoSuchPlant)
	headGone, err := c.HeadPlantWithResponse(ctx, 7, nil)
	decode(t, headGone, err).expectError(t, true, 404, 0)
	deletedAgain, err := c.DeletePlantWithResponse(ctx, 7, nil)
	decode(t, deletedAgain, err).expectError(t, false, 404, client.ErrorErrorNoSuchPlant)
}

// newPlantTag is a NewPlant's tag: the union the generated client makes of
// a tag and null.
func newPlantTag(t *testing.T, tag string) *client.NewPlant_Tag {
	t.Helper()
	var u client.NewPlant_Tag
	if err := u.FromTag(tag); err != nil {
		t.Fatal(err)
	}
	return &u
}

// patchTag is a PlantPatch's tag: tag, or null when tag is empty.
func patchTag(t *testing.T, tag string) *client.PlantPatch_Tag {
	t.Helper()
	var u client.PlantPatch_Tag
	err := u.UnmarshalJSON([]byte("null"))
	if tag != "" {
		err = u.FromTag(tag)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &u
}
