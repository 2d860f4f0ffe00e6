package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// etagOf is the strong ETag of p's stored state: a hash of its PlantItem
// JSON (id, name and tag), so that equal states have equal tags on every
// replica and after restarts, and different states different ones.
func etagOf(p domain.Plant) string {
	var buf [512]byte
	return etagOfItem(plantjson.AppendItem(buf[:0], p))
}

// etagOfItem is the ETag of a plant whose PlantItem JSON is item.
func etagOfItem(item []byte) string {
	sum := sha256.Sum256(item)
	var out [2 + 22]byte // the quotes and 16 bytes of the hash in base64
	out[0], out[len(out)-1] = '"', '"'
	base64.RawURLEncoding.Encode(out[1:len(out)-1], sum[:16])
	return string(out[:])
}

// setETag sets the ETag header of an answer that carries a plant.
func setETag(w http.ResponseWriter, tag string) { w.Header()["Etag"] = []string{tag} }

// etagListed reports whether the If-Match or If-None-Match header values
// list tag, or "*". With weak, a weak entity-tag (W/"...") counts as its
// strong form (the weak comparison If-None-Match uses); without, it never
// matches (the strong comparison of If-Match). A value that is not a list
// of entity-tags matches nothing from where it stops being one.
func etagListed(values []string, tag string, weak bool) bool {
	for _, v := range values {
		for v != "" {
			v = strings.TrimLeft(v, " \t,")
			if v == "" {
				break
			}
			if v[0] == '*' {
				return true
			}
			isWeak := strings.HasPrefix(v, "W/")
			if isWeak {
				v = v[2:]
			}
			if v == "" || v[0] != '"' {
				break
			}
			end := strings.IndexByte(v[1:], '"')
			if end < 0 {
				break
			}
			if v[:end+2] == tag && (weak || !isWeak) {
				return true
			}
			v = v[end+2:]
		}
	}
	return false
}

// The refusals of a conditional request (412 41201), each naming the header
// whose condition did not hold.
var (
	errIfMatch     = &preconditionError{"If-Match: the plant has changed since that ETag was read"}
	errIfNoneMatch = &preconditionError{"If-None-Match: the plant is in a state that the header lists"}
)

// preconditionError refuses a request whose condition does not hold; its
// text is the Error's message.
type preconditionError struct{ message string }

func (e *preconditionError) Error() string { return e.message }

// Unwrap makes every refusal match application.ErrPreconditionFailed.
func (e *preconditionError) Unwrap() error { return application.ErrPreconditionFailed }

// conditions are the conditional headers of a request on one plant (RFC
// 9110 §13.1), each nil when the request has none.
type conditions struct{ ifMatch, ifNoneMatch []string }

func conditionsOf(r *http.Request) conditions {
	return conditions{ifMatch: r.Header.Values("If-Match"), ifNoneMatch: r.Header.Values("If-None-Match")}
}

// check evaluates the conditions on the plant whose ETag is tag in the
// order of RFC 9110 §13.2.2: If-Match first, which holds when it lists tag
// compared strongly, or is "*"; then If-None-Match, which holds when it
// lists neither tag, compared weakly, nor "*". It returns the refusal of
// the first that does not hold, or nil. A read answers errIfNoneMatch with
// 304, a write with 412.
func (c conditions) check(tag string) error {
	if c.ifMatch != nil && !etagListed(c.ifMatch, tag, false) {
		return errIfMatch
	}
	if c.ifNoneMatch != nil && etagListed(c.ifNoneMatch, tag, true) {
		return errIfNoneMatch
	}
	return nil
}

// precondition is the conditions of a write as its use case takes them:
// checked by the store on the plant as it is at the write, in one atomic
// step with it. Nil when the request has no conditional header.
func (c conditions) precondition() application.Precondition {
	if c.ifMatch == nil && c.ifNoneMatch == nil {
		return nil
	}
	return func(stored domain.Plant) error { return c.check(etagOf(stored)) }
}
