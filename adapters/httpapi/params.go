package httpapi

import (
	"errors"
	"net/http"

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
