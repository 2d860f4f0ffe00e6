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

// Page is one page of plants.
type Page struct {
	Plants []domain.Plant // in ascending id order
	More   bool           // at least one more plant follows the last one
}

// PlantLister lists stored plants. Implementations are safe for concurrent use.
type PlantLister interface {
	// ListPlants returns at most q.Limit plants that match q, in ascending
	// id order. Errors are ErrUnavailable when the store cannot be reached,
	// else faults.
	ListPlants(ctx context.Context, q ListQuery) ([]domain.Plant, error)
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
	limit := q.Limit
	q.Limit++ // one more tells whether another page follows
	plants, err := uc.store.ListPlants(ctx, q)
	if err != nil {
		return Page{}, err
	}
	if len(plants) > limit {
		return Page{Plants: plants[:limit], More: true}, nil
	}
	return Page{Plants: plants}, nil
}

var limitProblem = "must be between 1 and " + strconv.Itoa(MaxListLimit)
