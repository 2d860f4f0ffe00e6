package application

import (
	"context"
	"math"
	"strconv"

	"github.com/plantstore/plantstore/domain"
)

// Bounds of a page of plants.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// ListQuery selects one page of plants, in ascending id order.
type ListQuery struct {
	// After, when HasAfter is set, keeps only plants with a greater id: the
	// last id of the previous page.
	After    domain.ID
	HasAfter bool
	// Tag, when set, keeps only plants with exactly this tag.
	Tag domain.Tag
	// Limit is the most plants on the page, 1 to MaxListLimit.
	Limit int
}

// From returns the smallest id the page may hold, and false when no id can
// follow After. Stores read from it inclusively, so that a query without
// After needs no special case.
func (q ListQuery) From() (domain.ID, bool) {
	switch {
	case !q.HasAfter:
		return math.MinInt64, true
	case q.After == math.MaxInt64:
		return 0, false
	}
	return q.After + 1, true
}

// Page is one page of plants as clients read it: a read model that the
// store renders, so that a page goes from the database to the client as
// bytes, with nothing built per plant on the way. A page is the product's
// most expensive read, and building a value per plant to encode it again
// cost as much CPU as the whole read (docs/performance.md, "List pages").
type Page struct {
	// JSON is the page's plants in ascending id order, as a JSON array of
	// the contract's PlantItem: each {"id":…,"name":…,"tag":…} with its
	// members in that order and no space, tag left out when the plant has
	// none, strings escaped where JSON requires it and nowhere else; []
	// when the page is empty. Every store writes the same bytes for the
	// same plants.
	JSON []byte
	// Count is how many plants the page holds, and Last the id of its last
	// plant when Count is not 0.
	Count int
	Last  domain.ID
	// More is true when at least one more plant matching the query
	// follows Last.
	More bool
}

// EmptyPage is the page that holds no plant.
func EmptyPage() Page { return Page{JSON: []byte("[]")} }

// PlantLister lists stored plants. Implementations are safe for concurrent use.
type PlantLister interface {
	// ListPlants returns the page of the first q.Limit plants that match
	// q, in ascending id order. Errors are ErrUnavailable when the store
	// cannot be reached, else faults.
	ListPlants(ctx context.Context, q ListQuery) (Page, error)
}

// ListPlants is the use case that lists plants a page at a time. Pages are
// keyset pages: each starts after the last id of the one before, so a walk
// from the first page to the last sees every plant that existed for the whole
// walk exactly once, whatever is created or deleted meanwhile.
type ListPlants struct {
	store PlantLister
	scope string
}

// NewListPlants returns the use case; it requires scopes.Read.
func NewListPlants(store PlantLister, scopes Scopes) *ListPlants {
	return &ListPlants{store: store, scope: scopes.Read}
}

// Authorize reports whether p may list plants: nil, or a *ScopeError.
func (uc *ListPlants) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// List returns the page q selects. A limit out of bounds is a
// *domain.FieldError for "limit".
func (uc *ListPlants) List(ctx context.Context, p Principal, q ListQuery) (Page, error) {
	if err := uc.Authorize(p); err != nil {
		return Page{}, err
	}
	if q.Limit < 1 || q.Limit > MaxListLimit {
		return Page{}, &domain.FieldError{Field: "limit", Problem: limitProblem}
	}
	if _, ok := q.From(); !ok {
		return EmptyPage(), nil
	}
	return uc.store.ListPlants(ctx, q)
}

var limitProblem = "must be between 1 and " + strconv.Itoa(MaxListLimit)
