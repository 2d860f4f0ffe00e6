package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/plantstore/plantstore/domain"
)

// pathID reads the route's {id}, as it was sent: not percent-decoded, so
// that an id has exactly one spelling. A bad one is a *domain.FieldError for
// "id" (40002).
func pathID(r *http.Request) (domain.ID, error) {
	return domain.ParseID(chi.URLParam(r, "id"))
}
