package httpapi

import (
	"context"
	"net/http"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// DeleteUseCase is the delete-plant use case as this adapter uses it;
// *application.DeletePlant implements it.
type DeleteUseCase interface {
	Authorize(p application.Principal) error
	Delete(ctx context.Context, p application.Principal, id domain.ID, pre application.Precondition) error
}

// deletePlant serves DELETE /plants/{id}: 204 once the deletion is
// committed, 404 when no plant has the id, 412 when the stored plant does
// not meet If-Match or If-None-Match (conditions.check). Checks run in the
// contract's order: authentication and scope, the parameters (the id, and
// no query), then the store.
func (a *API) deletePlant(w http.ResponseWriter, r *http.Request) {
	principal, ok := a.admit(w, r, a.deps.Delete)
	if !ok {
		return
	}
	id, err := idParams(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	err = a.deps.Delete.Delete(r.Context(), principal, id, conditionsOf(r).precondition())
	a.metrics.operation("delete", outcome("deleted", err))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
