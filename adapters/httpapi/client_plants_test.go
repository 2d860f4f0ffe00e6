package httpapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/client"
)

// The client creates, replays, reads, changes and deletes a plant, with the
// ETag of every answer that carries one and the conditions the service
// honours: If-None-Match on a read, If-Match on a change and a delete.
func TestClientPlantOperations(t *testing.T) {
	ctx := context.Background()
	s := startServer(t)
	c, _ := s.plantClient(t, s.token(t, nil))

	created, err := c.Create(ctx, client.NewPlant{ID: 7, Name: "Monstera deliciosa", Tag: "aroid"})
	if err != nil || created.ID != 7 || created.Name != "Monstera deliciosa" || created.Tag != "aroid" || !isQuoted(created.ETag) {
		t.Fatalf("create: %+v %v", created, err)
	}
	// Idempotent by id: the same plant again is the same success.
	if replayed, err := c.Create(ctx, client.NewPlant{ID: 7, Name: "Monstera deliciosa", Tag: "aroid"}); err != nil || replayed != created {
		t.Fatalf("replay: %+v %v, want %+v", replayed, err, created)
	}
	_, err = c.Create(ctx, client.NewPlant{ID: 7, Name: "Monstera adansonii"})
	apiError(t, err, 409, client.CodeConflict, client.ErrConflict)

	if got, err := c.Get(ctx, 7); err != nil || got != created {
		t.Fatalf("read: %+v %v, want %+v", got, err, created)
	}
	for _, etags := range [][]string{{created.ETag}, {`"other"`, created.ETag}, {client.AnyETag}} {
		got, err := c.Get(ctx, 7, client.IfNoneMatch(etags...))
		var current *client.NotModifiedError
		if !errors.Is(err, client.ErrNotModified) || !errors.As(err, &current) || current.ETag != created.ETag || got != (client.Plant{}) {
			t.Fatalf("read if none match %q: %+v %v", etags, got, err)
		}
	}
	if got, err := c.Get(ctx, 7, client.IfNoneMatch(`"other"`)); err != nil || got != created {
		t.Fatalf("read if none match another ETag: %+v %v", got, err)
	}

	renamed, err := c.Change(ctx, 7, client.Patch{}.SetName("Monstera adansonii"), client.IfMatch(created.ETag))
	if err != nil || renamed.ID != 7 || renamed.Name != "Monstera adansonii" || renamed.Tag != "aroid" || !isQuoted(renamed.ETag) || renamed.ETag == created.ETag {
		t.Fatalf("change: %+v %v", renamed, err)
	}
	// The ETag read before the change no longer holds: nothing changes.
	_, err = c.Change(ctx, 7, client.Patch{}.SetTag("vine"), client.IfMatch(created.ETag))
	apiError(t, err, 412, client.CodePreconditionFailed, client.ErrPreconditionFailed)
	if got, err := c.Get(ctx, 7); err != nil || got != renamed {
		t.Fatalf("after a refused change: %+v %v, want %+v", got, err, renamed)
	}
	tagged, err := c.Change(ctx, 7, client.Patch{}.SetTag("vine"), client.IfMatch(client.AnyETag))
	if err != nil || tagged.Name != renamed.Name || tagged.Tag != "vine" {
		t.Fatalf("change if any: %+v %v", tagged, err)
	}
	// The merge patch's null removes the tag.
	untagged, err := c.Change(ctx, 7, client.Patch{}.RemoveTag(), client.IfMatch(`"stale"`, tagged.ETag))
	if err != nil || untagged.Tag != "" || untagged.Name != renamed.Name {
		t.Fatalf("remove the tag: %+v %v", untagged, err)
	}
	if got, err := c.Get(ctx, 7); err != nil || got != untagged {
		t.Fatalf("read without the tag: %+v %v, want %+v", got, err, untagged)
	}
	if got, err := c.Change(ctx, 7, client.Patch{}); err != nil || got != untagged {
		t.Fatalf("an empty patch: %+v %v, want %+v", got, err, untagged)
	}
	_, err = c.Change(ctx, 70, client.Patch{}.SetName("Sage"))
	apiError(t, err, 404, client.CodeNoSuchPlant, client.ErrNotFound)
	_, err = c.Get(ctx, 70, client.IfNoneMatch(client.AnyETag))
	apiError(t, err, 404, client.CodeNoSuchPlant, client.ErrNotFound)

	err = c.Delete(ctx, 7, client.IfMatch(tagged.ETag))
	apiError(t, err, 412, client.CodePreconditionFailed, client.ErrPreconditionFailed)
	if err := c.Delete(ctx, 7, client.IfMatch(untagged.ETag)); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = c.Get(ctx, 7)
	apiError(t, err, 404, client.CodeNoSuchPlant, client.ErrNotFound)
	err = c.Delete(ctx, 7)
	apiError(t, err, 404, client.CodeNoSuchPlant, client.ErrNotFound)
	// The id is free again.
	if again, err := c.Create(ctx, client.NewPlant{ID: 7, Name: "Ivy"}); err != nil || again.Name != "Ivy" || again.Tag != "" {
		t.Fatalf("create after the delete: %+v %v", again, err)
	}
}

// List walks every page, following the service's links with the tag and
// page size kept, and ListPage answers one page and the next one's options.
func TestClientListWalksEveryPage(t *testing.T) {
	ctx := context.Background()
	s := startServer(t)
	c, tr := s.plantClient(t, s.token(t, nil))
	const odd = "sun & shade, 50%/50%" // a tag the query must escape
	var all, tagged []int64
	for _, id := range []int64{-3, 1, 2, 5, 8, 13, 21} {
		tag := ""
		if id%2 != 0 {
			tag = odd
			tagged = append(tagged, id)
		}
		if _, err := c.Create(ctx, client.NewPlant{ID: id, Name: fmt.Sprint("plant ", id), Tag: tag}); err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
	}

	for _, tc := range []struct {
		opts  client.ListOptions
		want  []int64
		pages int
	}{
		{client.ListOptions{}, all, 1},
		{client.ListOptions{PageSize: 2}, all, 4},
		{client.ListOptions{PageSize: 7}, all, 1},
		{client.ListOptions{PageSize: 1, Tag: odd}, tagged, len(tagged)},
		{client.ListOptions{PageSize: 3, After: new(int64(2))}, []int64{5, 8, 13, 21}, 2},
		{client.ListOptions{Tag: "none"}, nil, 1},
	} {
		before := len(tr.requests())
		var got []int64
		for p, err := range c.List(ctx, tc.opts) {
			if err != nil {
				t.Fatalf("%+v: %v", tc.opts, err)
			}
			if p.Name != fmt.Sprint("plant ", p.ID) || (p.Tag == odd) != slices.Contains(tagged, p.ID) || !isQuoted(p.ETag) {
				t.Errorf("%+v: listed %+v", tc.opts, p)
			}
			got = append(got, p.ID)
		}
		if !slices.Equal(got, tc.want) || len(tr.requests())-before != tc.pages {
			t.Errorf("%+v: listed %v in %d requests, want %v in %d: %q", tc.opts, got, len(tr.requests())-before, tc.want, tc.pages, tr.requests()[before:])
		}
	}

	page, err := c.ListPage(ctx, client.ListOptions{PageSize: 2, Tag: odd})
	if err != nil || len(page.Plants) != 2 || page.Plants[1].ID != 1 || page.Next == nil ||
		page.Next.PageSize != 2 || page.Next.Tag != odd || page.Next.After == nil || *page.Next.After != 1 {
		t.Fatalf("first page: %+v %+v %v", page, page.Next, err)
	}
	last, err := c.ListPage(ctx, client.ListOptions{PageSize: 2, After: new(int64(13))})
	if err != nil || len(last.Plants) != 1 || last.Plants[0].ID != 21 || last.Next != nil {
		t.Fatalf("last page: %+v %v", last, err)
	}
}

// A list stops at the first page the service refuses: the error, an
// *client.Error with the 503's Retry-After, is yielded once after the
// plants of the pages before, and nothing more is asked.
func TestClientListStopsOnError(t *testing.T) {
	ctx := context.Background()
	store := seededStore(t) // Aloe, id 1
	s := startServer(t, withStore(store))
	c, tr := s.plantClient(t, s.token(t, nil))
	for id := int64(2); id <= 5; id++ {
		if _, err := c.Create(ctx, client.NewPlant{ID: id, Name: "Fern"}); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int32
	store.Inject(func() error {
		if calls.Add(1) > 1 {
			return fmt.Errorf("pool: %w", application.ErrUnavailable)
		}
		return nil
	})
	before := len(tr.requests())
	var ids []int64
	var errs []error
	for p, err := range c.List(ctx, client.ListOptions{PageSize: 2}) {
		ids, errs = append(ids, p.ID), append(errs, err)
	}
	if !slices.Equal(ids, []int64{1, 2, 0}) || errs[0] != nil || errs[1] != nil || len(tr.requests())-before != 2 {
		t.Fatalf("listed %v with %v in %d requests", ids, errs, len(tr.requests())-before)
	}
	if e := apiError(t, errs[2], 503, client.CodeUnavailable, client.ErrUnavailable); e.RetryAfter < time.Second {
		t.Errorf("Retry-After %v, want at least a second", e.RetryAfter)
	}
}

// The end of the context stops a list inside a page: its error is yielded
// after the plants yielded before, and nothing more is asked.
func TestClientListStopsWhenItsContextEnds(t *testing.T) {
	s := startServer(t)
	c, tr := s.plantClient(t, s.token(t, nil))
	for id := int64(1); id <= 5; id++ {
		if _, err := c.Create(context.Background(), client.NewPlant{ID: id, Name: "Fern"}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := len(tr.requests())
	var ids []int64
	var stopped error
	for p, err := range c.List(ctx, client.ListOptions{}) {
		if err != nil {
			stopped = err
			break
		}
		if ids = append(ids, p.ID); len(ids) == 2 {
			cancel()
		}
	}
	if !slices.Equal(ids, []int64{1, 2}) || !errors.Is(stopped, context.Canceled) || len(tr.requests())-before != 1 {
		t.Fatalf("cancelled after 2 plants: listed %v, then %v, in %d requests", ids, stopped, len(tr.requests())-before)
	}
}

// isQuoted reports whether etag has the form of a strong ETag.
func isQuoted(etag string) bool {
	return len(etag) > 2 && strings.HasPrefix(etag, `"`) && strings.HasSuffix(etag, `"`)
}
