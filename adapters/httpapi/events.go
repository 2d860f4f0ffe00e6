package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// EventsUseCase is the event-feed use case as this adapter uses it;
// *application.ListEvents implements it.
type EventsUseCase interface {
	Authorize(p application.Principal) error
	List(ctx context.Context, p application.Principal, q application.FeedQuery) (application.EventPage, error)
}

// listEvents serves GET /events: a JSON array of events in feed order, as
// the store rendered it, and on every page, the last and an empty one
// included, a Link to the next: the feed has no end, and the last link
// read again returns what was committed since. Checks run in the
// contract's order: authentication and scope, the query, then the store
// (410 for a cursor older than the retention).
func (a *API) listEvents(w http.ResponseWriter, r *http.Request) {
	principal, ok := a.admit(w, r, a.deps.Events)
	if !ok {
		return
	}
	q, err := feedQuery(r.URL.RawQuery)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	hold, ok := a.reservePage(w, r, "events", eventPageBytes(q.Limit))
	if !ok {
		return
	}
	defer hold.release()
	page, err := a.deps.Events.List(r.Context(), principal, q)
	a.metrics.operation("events", outcome("listed", err))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	hold.keep(len(page.JSON))
	w.Header().Set("Link", nextEventsLink(q.Limit, page.Next))
	writeJSON(w, http.StatusOK, page.JSON)
}

// feedQuery reads the query string of GET /events: limit and after, each
// at most once, and nothing else (40002, each problem named).
func feedQuery(raw string) (application.FeedQuery, error) {
	q := application.FeedQuery{Limit: application.DefaultEventLimit}
	problems := readQuery(raw, []string{"limit", "after"}, func(key, value string) *domain.FieldError {
		switch key {
		case "limit":
			n, ok := parseCount(value)
			if !ok || n < 1 || n > application.MaxEventLimit {
				return &domain.FieldError{Field: "limit", Problem: "must be a whole number between 1 and " + strconv.Itoa(application.MaxEventLimit)}
			}
			q.Limit = n
		case "after":
			p, ok := parseCursor(value)
			if !ok {
				return &domain.FieldError{Field: "after", Problem: "must be a cursor from a Link of this feed"}
			}
			q.After, q.HasAfter = p, true
		}
		return nil
	})
	if problems != nil {
		return application.FeedQuery{}, problems
	}
	return q, nil
}

// nextEventsLink is the RFC 8288 link to the page after next, keeping the
// limit. A cursor is base64url, which needs no escaping in a query.
func nextEventsLink(limit int, next application.FeedPosition) string {
	var b strings.Builder
	b.WriteString("</events?limit=")
	b.WriteString(strconv.Itoa(limit))
	b.WriteString("&after=")
	b.WriteString(formatCursor(next))
	b.WriteString(`>; rel="next"`)
	return b.String()
}
