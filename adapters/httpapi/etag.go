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

// etagListed reads the values of an If-Match or If-None-Match header as
// one field (RFC 9110 §13.1.1): "*" alone, or a comma-separated list of
// entity-tags, which may be empty (an empty value lists no tag). It reports
// whether the field is valid, and whether it is "*" or lists tag. With
// weak, a weak entity-tag (W/"...") counts as its strong form (the weak
// comparison If-None-Match uses); without, it never matches (the strong
// comparison of If-Match). An invalid field lists nothing: junk after a
// tag, "*" beside tags, an unquoted tag.
func etagListed(values []string, tag string, weak bool) (listed, valid bool) {
	elements, star := 0, false
	for _, v := range values {
		for {
			v = strings.TrimLeft(v, " \t")
			if v == "" {
				break
			}
			if v[0] == ',' { // a list may have empty elements
				v = v[1:]
				continue
			}
			elements++
			if v[0] == '*' {
				star, v = true, v[1:]
			} else {
				isWeak := strings.HasPrefix(v, "W/")
				if isWeak {
					v = v[2:]
				}
				n := entityTagLen(v)
				if n == 0 {
					return false, false
				}
				listed = listed || v[:n] == tag && (weak || !isWeak)
				v = v[n:]
			}
			v = strings.TrimLeft(v, " \t")
			if v != "" && v[0] != ',' {
				return false, false
			}
		}
	}
	if star && elements > 1 {
		return false, false
	}
	return listed || star, true
}

// entityTagLen is the length of the opaque-tag that s begins with: a
// quoted string of etagc (RFC 9110 §8.8.3), quotes included; 0 if s begins
// with none.
func entityTagLen(s string) int {
	if s == "" || s[0] != '"' {
		return 0
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1
		case c < 0x21, c == 0x7f:
			return 0
		}
	}
	return 0
}

// The refusals of a conditional request (412 41201), each naming the header
// whose condition did not hold.
var (
	errIfMatch              = &preconditionError{"If-Match: the plant has changed since that ETag was read"}
	errIfNoneMatch          = &preconditionError{"If-None-Match: the plant is in a state that the header lists"}
	errMalformedIfMatch     = &preconditionError{`If-Match: must be "*" or a comma-separated list of entity-tags ("…" or W/"…")`}
	errMalformedIfNoneMatch = &preconditionError{`If-None-Match: must be "*" or a comma-separated list of entity-tags ("…" or W/"…")`}
)

// preconditionError refuses a request whose condition does not hold; its
// text is the Error's message.
type preconditionError struct{ message string }

func (e *preconditionError) Error() string { return e.message }

// Unwrap makes every refusal match application.ErrPreconditionFailed.
func (e *preconditionError) Unwrap() error { return application.ErrPreconditionFailed }

// conditions are the conditional headers of a request on one plant (RFC
// 9110 §13.1), each nil when the request has none, and whether the request
// writes.
type conditions struct {
	ifMatch, ifNoneMatch []string
	write                bool
}

func conditionsOf(r *http.Request) conditions {
	return conditions{
		ifMatch:     r.Header.Values("If-Match"),
		ifNoneMatch: r.Header.Values("If-None-Match"),
		write:       r.Method != http.MethodGet && r.Method != http.MethodHead,
	}
}

// check evaluates the conditions on the plant whose ETag is tag in the
// order of RFC 9110 §13.2.2: If-Match first, which holds when it lists tag
// compared strongly, or is "*"; then If-None-Match, which holds when it
// lists neither tag, compared weakly, nor "*". It returns the refusal of
// the first that does not hold, or nil. A read answers errIfNoneMatch with
// 304, a write with 412. A header that is not such a field holds for no
// plant, failing safe: a write is refused, and a read ignores an invalid
// If-None-Match rather than answer 304 for a state nobody named.
func (c conditions) check(tag string) error {
	if c.ifMatch != nil {
		if listed, valid := etagListed(c.ifMatch, tag, false); !valid {
			return errMalformedIfMatch
		} else if !listed {
			return errIfMatch
		}
	}
	if c.ifNoneMatch != nil {
		listed, valid := etagListed(c.ifNoneMatch, tag, true)
		switch {
		case !valid && c.write:
			return errMalformedIfNoneMatch
		case listed:
			return errIfNoneMatch
		}
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
