package httpapi

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// ChangeUseCase is the change-plant use case as this adapter uses it;
// *application.ChangePlant implements it.
type ChangeUseCase interface {
	Authorize(p application.Principal) error
	Change(ctx context.Context, p application.Principal, id domain.ID, c application.PlantChange, pre application.Precondition) (domain.Plant, error)
}

// errPatchMediaType refuses a merge patch in another content type (41501).
var errPatchMediaType = errors.New("Content-Type: must be application/merge-patch+json or application/json")

// changePlant serves PATCH /plants/{id}: a JSON Merge Patch of the name and
// the tag, 200 with the changed plant and its ETag, 404 when no plant has
// the id, 412 when the stored plant does not meet If-Match or
// If-None-Match (conditions.check). Checks
// run in the contract's order: authentication and scope, the parameters,
// content type, size, JSON, fields, then the store.
func (a *API) changePlant(w http.ResponseWriter, r *http.Request) {
	principal, ok := a.admit(w, r, a.deps.Change)
	if !ok {
		return
	}
	id, err := idParams(r)
	if err == nil {
		err = checkPatchContentType(r)
	}
	if err == nil {
		err = checkContentEncoding(r)
	}
	if err != nil {
		a.refuseUnread(w, r, err)
		return
	}
	buf := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(buf)
	body, err := readBody(w, r, (*buf)[:0], a.maxBodyBytes)
	*buf = body[:0]
	if err != nil {
		a.refuseUnread(w, r, err)
		return
	}
	change, err := decodePlantPatch(body)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	plant, err := a.deps.Change.Change(r.Context(), principal, id, change, conditionsOf(r).precondition())
	a.metrics.operation("change", outcome("changed", err))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out := plantjson.AppendItem(body[:0], plant)
	*buf = out[:0]
	setETag(w, etagOfItem(out))
	writeJSON(w, http.StatusOK, out)
}

// checkPatchContentType accepts exactly one Content-Type of
// application/merge-patch+json or application/json; parameters are fine,
// except a charset other than UTF-8.
func checkPatchContentType(r *http.Request) error {
	values := r.Header.Values("Content-Type")
	if len(values) != 1 {
		return errPatchMediaType
	}
	mediaType, params, err := mime.ParseMediaType(values[0])
	if err != nil || (mediaType != "application/merge-patch+json" && mediaType != "application/json") {
		return errPatchMediaType
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return errPatchMediaType
	}
	return nil
}

// plantPatchJSON is a merge patch of a plant as JSON carries it, under the
// strict rules of newPlantJSON: the id is named to be refused, every other
// unknown member is collected to be named.
type plantPatchJSON struct {
	ID   jsontext.Value `json:"id"`
	Name jsontext.Value `json:"name"`
	Tag  jsontext.Value `json:"tag"`
	//lint:ignore SA5008 both are json v2 options; see newPlantJSON
	Unknown jsontext.Value `json:",embed,inline"`
}

// decodePlantPatch parses body as a JSON Merge Patch (RFC 7396) of a plant:
// name a string, tag a string or null (which removes it), nothing else. It
// returns a *syntaxError when the body is not one valid JSON object, else
// domain.FieldErrors naming every problem.
func decodePlantPatch(body []byte) (application.PlantChange, error) {
	if err := checkObject(body); err != nil {
		return application.PlantChange{}, err
	}
	var in plantPatchJSON
	if err := json.Unmarshal(body, &in); err != nil {
		return application.PlantChange{}, syntaxErrorOf(err)
	}
	var (
		change   application.PlantChange
		problems domain.FieldErrors
	)
	if len(in.ID) > 0 {
		problems = append(problems, &domain.FieldError{Field: "id", Problem: "cannot be changed"})
	}
	if len(in.Name) > 0 {
		name, err := parseName(in.Name)
		var fe *domain.FieldError
		if errors.As(err, &fe) {
			problems = append(problems, fe)
		}
		change.Name = &name
	}
	if len(in.Tag) > 0 {
		tag, err := parseTag(in.Tag)
		var fe *domain.FieldError
		if errors.As(err, &fe) {
			problems = append(problems, fe)
		}
		change.Tag = &tag
	}
	problems = append(problems, unknownFields(in.Unknown)...)
	if problems != nil {
		return application.PlantChange{}, problems
	}
	return change, nil
}
