package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/plantstore/plantstore/domain"
)

// idParams reads the parameters of the routes on one plant: the path's {id},
// as it was sent (not percent-decoded, so that an id has exactly one
// spelling), and no query parameter. Every problem is reported together,
// each naming its parameter (40002).
func idParams(r *http.Request) (domain.ID, error) {
	id, err := domain.ParseID(chi.URLParam(r, "id"))
	problems := noQuery(r.URL.RawQuery)
	if problems == nil {
		return id, err
	}
	var fe *domain.FieldError
	if errors.As(err, &fe) {
		problems = append(domain.FieldErrors{fe}, problems...)
	}
	return 0, problems
}

// noQuery refuses every query parameter, for the routes that take none
// (40002, each named).
func noQuery(raw string) domain.FieldErrors {
	return readQuery(raw, nil, nil)
}

// readQuery decodes a query string and hands each known parameter to set,
// which returns what is wrong with its value. An unknown parameter is
// named once, however often it is given; a known one given twice, or one
// not correctly percent-encoded, is a problem before set sees it.
func readQuery(raw string, known []string, set func(key, value string) *domain.FieldError) domain.FieldErrors {
	var (
		problems domain.FieldErrors
		seen     map[string]bool
	)
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil {
			problems = append(problems, &domain.FieldError{Field: "query", Problem: "must be correctly percent-encoded"})
			continue
		}
		if key == "" {
			problems = append(problems, &domain.FieldError{Field: "query", Problem: "a parameter has no name"})
			continue
		}
		value, err := url.QueryUnescape(rawValue)
		switch {
		case err != nil:
			problems = append(problems, &domain.FieldError{Field: echo(key), Problem: "must be correctly percent-encoded"})
			continue
		case seen[key] && slices.Contains(known, key):
			problems = append(problems, &domain.FieldError{Field: echo(key), Problem: "must be given at most once"})
			continue
		case seen[key]:
			continue // unknown, and named already
		}
		if seen == nil {
			seen = make(map[string]bool, 3)
		}
		seen[key] = true
		if !slices.Contains(known, key) {
			problems = append(problems, &domain.FieldError{Field: echo(key), Problem: "unknown query parameter"})
		} else if problem := set(key, value); problem != nil {
			problems = append(problems, problem)
		}
	}
	return problems
}
