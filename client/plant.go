package client

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
)

// Plant is a stored plant, as the API answers it. Its JSON is the API's.
type Plant struct {
	// ID is the plant's id, chosen by whoever created it.
	ID int64 `json:"id"`
	// Name is the plant's name, exactly as it was sent.
	Name string `json:"name"`
	// Tag is the plant's tag, exactly as it was sent; "" when it has none.
	Tag string `json:"tag,omitempty"`
	// ETag identifies the stored state the answer showed (quotes
	// included), for IfMatch and IfNoneMatch: a listed plant can be changed
	// or deleted on condition without a Get first. Create, Get and Change
	// take it from the answer's ETag header; List, ListPage and the feed's
	// events compute it from the plant's JSON as the API listed it, by the
	// rule docs/openapi.yaml states, which makes it the ETag that GET
	// /plants/{id} answers for that state (for an event, the state after
	// its write: the plant's current ETag while no later write followed).
	// A Plant built or decoded by the caller has none ("").
	ETag string `json:"-"`
}

// listed decodes item, one plant of a list page or of an event as the API
// rendered it, into a Plant with its ETag: the API's, the unpadded base64url
// of the first 16 bytes of the SHA-256 of item, in double quotes. It hashes
// item's bytes as they were served: the same plant encoded again could
// differ in a byte (an escape, the order of members) and so in its ETag.
func listed(item json.RawMessage) (Plant, error) {
	var p Plant
	if err := json.Unmarshal(item, &p); err != nil {
		return Plant{}, err
	}
	sum := sha256.Sum256(item)
	p.ETag = `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
	return p, nil
}

// NewPlant is a plant to create. Its JSON is the API's.
type NewPlant struct {
	// ID is the plant's id, any int64: the caller chooses it, which makes a
	// create safe to retry.
	ID int64 `json:"id"`
	// Name is 1 to 200 characters (Unicode code points), not only white
	// space, without control characters.
	Name string `json:"name"`
	// Tag is 1 to 64 characters with the rules of Name, or "" for none.
	Tag string `json:"tag,omitempty"`
}

// Patch is a change to a plant, sent as a JSON Merge Patch (RFC 7396): each
// member it sets is changed, the others are kept. The zero Patch changes
// nothing. Build it with its methods:
//
//	client.Patch{}.SetName("Monstera adansonii").RemoveTag()
type Patch struct {
	name   *string
	tag    *string // the new tag when setTag; nil there removes it
	setTag bool
}

// SetName changes the name (the rules of NewPlant.Name).
func (p Patch) SetName(name string) Patch {
	p.name = &name
	return p
}

// SetTag changes the tag (the rules of NewPlant.Tag; "" is refused: use
// RemoveTag).
func (p Patch) SetTag(tag string) Patch {
	p.tag, p.setTag = &tag, true
	return p
}

// RemoveTag leaves the plant without a tag: the patch sends "tag": null.
func (p Patch) RemoveTag() Patch {
	p.tag, p.setTag = nil, true
	return p
}

// MarshalJSON is the merge patch: {"name": ..., "tag": ... or null}, with
// the members the patch sets.
func (p Patch) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if p.name != nil {
		m["name"] = *p.name
	}
	if p.setTag {
		m["tag"] = p.tag // a nil *string is null
	}
	return json.Marshal(m)
}
