package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// GetUseCase is the get-plant use case as this adapter uses it;
// *application.GetPlant implements it.
type GetUseCase interface {
	Authorize(p application.Principal) error
	Get(ctx context.Context, p application.Principal, id domain.ID) (domain.Plant, error)
}

// getPlant serves GET /plants/{id}: the stored plant in NewPlant's shape
// with its ETag, 304 with the ETag alone when If-None-Match lists it, 412
// when If-Match does not (evaluated first, conditions.check), or 404 when
// no plant has the id. Checks run in the contract's order: authentication
// and scope, the parameters (the id, and no query), then the store.
func (a *API) getPlant(w http.ResponseWriter, r *http.Request) {
	principal, ok := a.admit(w, r, a.deps.Get)
	if !ok {
		return
	}
	id, err := idParams(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	plant, err := a.deps.Get.Get(r.Context(), principal, id)
	var (
		buf  [512]byte
		body []byte
		tag  string
	)
	if err == nil {
		body = plantjson.AppendItem(buf[:0], plant)
		tag = etagOfItem(body)
		err = conditionsOf(r).check(tag)
	}
	notModified := errors.Is(err, errIfNoneMatch)
	if notModified {
		err = nil
	}
	a.metrics.operation("get", outcome("found", err))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	setETag(w, tag)
	if notModified {
		// The client holds this state already: no body (RFC 9110 §13.1.2).
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, body)
}
