package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// ListUseCase is the list-plants use case as this adapter uses it;
// *application.ListPlants implements it.
type ListUseCase interface {
	Authorize(p application.Principal) error
	List(ctx context.Context, p application.Principal, q application.ListQuery) (application.Page, error)
}

// listPlants serves GET /plants: a JSON array of plants in ascending id
// order, as the store rendered it, and a Link to the next page when one
// follows. Checks run in the contract's order: authentication and scope,
// the query, then the store.
func (a *API) listPlants(w http.ResponseWriter, r *http.Request) {
	principal, ok := a.admit(w, r, a.deps.List)
	if !ok {
		return
	}
	q, err := listQuery(r.URL.RawQuery)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	hold, ok := a.reservePage(w, r, "list", listPageBytes(q.Limit))
	if !ok {
		return
	}
	defer hold.release()
	page, err := a.deps.List.List(r.Context(), principal, q)
	a.metrics.operation("list", outcome("listed", err))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	hold.keep(len(page.JSON))
	if page.More {
		w.Header().Set("Link", nextLink(q, page.Last))
	}
	writeJSON(w, http.StatusOK, page.JSON)
}

// listQuery reads the query string of GET /plants: limit, after and tag,
// each at most once, and nothing else. Every problem is reported together,
// each naming its parameter (40002).
func listQuery(raw string) (application.ListQuery, error) {
	q := application.ListQuery{Limit: application.DefaultListLimit}
	problems := readQuery(raw, []string{"limit", "after", "tag"}, func(key, value string) *domain.FieldError {
		return setParam(&q, key, value)
	})
	if problems != nil {
		return application.ListQuery{}, problems
	}
	return q, nil
}

// setParam sets one known parameter of q from its decoded value, or returns
// the problem with it.
func setParam(q *application.ListQuery, key, value string) *domain.FieldError {
	switch key {
	case "limit":
		n, ok := parseCount(value)
		if !ok || n < 1 || n > application.MaxListLimit {
			return &domain.FieldError{Field: "limit", Problem: "must be a whole number between 1 and " + strconv.Itoa(application.MaxListLimit)}
		}
		q.Limit = n
	case "after":
		id, err := domain.ParseID(value)
		if err != nil {
			return &domain.FieldError{Field: "after", Problem: problemOf(err)}
		}
		q.After, q.HasAfter = id, true
	case "tag":
		tag, err := domain.ParseTag(value)
		if err != nil {
			return &domain.FieldError{Field: "tag", Problem: problemOf(err)}
		}
		q.Tag = tag
	}
	return nil
}

// problemOf is what a domain parser found wrong with a value.
func problemOf(err error) string {
	var fe *domain.FieldError
	if errors.As(err, &fe) {
		return fe.Problem
	}
	return err.Error()
}

// parseCount reads a positive decimal without sign or leading zeros, as
// small as a page limit; anything else is not ok.
func parseCount(s string) (int, bool) {
	if s == "" || len(s) > 4 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// nextLink is the RFC 8288 link to the page after last, keeping the limit
// and the tag of q.
func nextLink(q application.ListQuery, last domain.ID) string {
	var b strings.Builder
	b.WriteString("</plants?limit=")
	b.WriteString(strconv.Itoa(q.Limit))
	b.WriteString("&after=")
	b.WriteString(last.String())
	if q.Tag.IsSet() {
		b.WriteString("&tag=")
		// %20 rather than +, which not every reader of a URI takes as a space.
		b.WriteString(strings.ReplaceAll(url.QueryEscape(q.Tag.String()), "+", "%20"))
	}
	b.WriteString(`>; rel="next"`)
	return b.String()
}
