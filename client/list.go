package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"net/http"
	"net/url"
	"strconv"

	"github.com/plantstore/plantstore/client/internal/oapi"
)

// ListOptions says which plants List and ListPage answer, in ascending id
// order.
type ListOptions struct {
	// Tag keeps the plants with exactly this tag; "" keeps every plant.
	Tag string
	// PageSize is the most plants one request answers, 1 to 1000; 0 lets
	// the service choose (100).
	PageSize int
	// After keeps the plants with a greater id (the last id of a page read
	// before); nil starts with the smallest id.
	After *int64
}

// Page is one answer of ListPage.
type Page struct {
	// Plants are the page's plants, in ascending id order, each with its
	// ETag (Plant.ETag).
	Plants []Plant
	// Next are the options of the following page, from the answer's
	// Link rel="next"; nil on the last page.
	Next *ListOptions
}

// List lists the plants that opts selects, one page after another (a
// request per page, following the service's Link rel="next") until the
// last page, the caller's break, the end of ctx, or an error: then it
// yields a zero Plant with the error (one that errors.Is matches with
// ctx's, when it ended) and stops. Walking every page lists each plant that exists
// for the whole walk exactly once, whatever is created or deleted meanwhile.
//
//	for p, err := range c.List(ctx, client.ListOptions{Tag: "aroid"}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(p.ID, p.Name)
//	}
func (c *Client) List(ctx context.Context, opts ListOptions) iter.Seq2[Plant, error] {
	return func(yield func(Plant, error) bool) {
		for {
			page, err := c.ListPage(ctx, opts)
			if err != nil {
				yield(Plant{}, err)
				return
			}
			for _, p := range page.Plants {
				if err := ctx.Err(); err != nil {
					yield(Plant{}, err)
					return
				}
				if !yield(p, nil) {
					return
				}
			}
			if page.Next == nil {
				return
			}
			opts = *page.Next
		}
	}
}

// ListPage answers one page of the plants that opts selects, and the
// options of the next page.
func (c *Client) ListPage(ctx context.Context, opts ListOptions) (Page, error) {
	if err := c.ready(); err != nil {
		return Page{}, err
	}
	params := &oapi.ListPlantsParams{After: opts.After}
	if opts.Tag != "" {
		params.Tag = &opts.Tag
	}
	if opts.PageSize != 0 {
		if opts.PageSize < math.MinInt32 || opts.PageSize > math.MaxInt32 {
			return Page{}, fmt.Errorf("plantstore: PageSize %d: want 1 to 1000", opts.PageSize)
		}
		limit := int32(opts.PageSize)
		params.Limit = &limit
	}
	resp, err := c.api.ListPlants(ctx, params)
	b, err := read(resp, err, http.StatusOK)
	if err != nil {
		return Page{}, err
	}
	// Each item is kept as served, for its ETag.
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return Page{}, fmt.Errorf("plantstore: the answer is not a list of plants: %w", err)
	}
	page := Page{Plants: make([]Plant, len(items))}
	for i, item := range items {
		if page.Plants[i], err = listed(item); err != nil {
			return Page{}, fmt.Errorf("plantstore: the answer is not a list of plants: %w", err)
		}
	}
	next, ok, err := nextLink(resp.Header)
	if err != nil || !ok {
		return page, err
	}
	if page.Next, err = nextOptions(next, opts); err != nil {
		return Page{}, err
	}
	return page, nil
}

// nextOptions are the options of the page that the Link target next names:
// its query's limit, after and tag. They are read from the link rather than
// the link followed as it is, so that the client keeps its own base URL
// (the service's link has its own view of the path, which a proxy serving
// it under a prefix changes). A link without progress past cur, or with a
// parameter the client does not know, is an error rather than a loop or a
// page silently different from the one the service meant.
func nextOptions(next string, cur ListOptions) (*ListOptions, error) {
	bad := func(why string) error {
		return fmt.Errorf("plantstore: the next page's link %q %s", next, why)
	}
	u, err := url.Parse(next)
	if err != nil {
		return nil, bad("is not a URL")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, bad("has a malformed query")
	}
	opts := ListOptions{}
	for k, v := range q {
		if len(v) != 1 {
			return nil, bad("repeats " + k)
		}
		switch k {
		case "limit":
			if opts.PageSize, err = strconv.Atoi(v[0]); err != nil {
				return nil, bad("has a limit that is not a number")
			}
		case "after":
			after, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil {
				return nil, bad("has an after that is not an id")
			}
			opts.After = &after
		case "tag":
			opts.Tag = v[0]
		default:
			return nil, bad("has a parameter the client does not know: " + k)
		}
	}
	if opts.After == nil || (cur.After != nil && *opts.After <= *cur.After) {
		return nil, bad("does not go past the page")
	}
	return &opts, nil
}
