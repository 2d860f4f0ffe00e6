package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
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
