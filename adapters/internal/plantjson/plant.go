package plantjson

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/plantstore/plantstore/domain"
)

// Plant is the Plant schema: a stored plant without its id, as a create
// answers it. Tag is left out when the plant has none.
type Plant struct {
	Name string `json:"name"`
	Tag  string `json:"tag,omitempty"`
}

// Item is the PlantItem schema: the id, then the plant, as reads, lists and
// the webhook's body carry it.
type Item struct {
	ID    int64 `json:"id"`
	Plant `json:",inline"`
}

// FromDomain is the transport form of p.
func FromDomain(p domain.Plant) Item {
	return Item{ID: int64(p.ID()), Plant: Plant{Name: p.Name().String(), Tag: p.Tag().String()}}
}

// options keep stored text as it is: only what JSON requires is escaped
// (quote, backslash, control characters), not HTML characters nor U+2028
// and U+2029, which a JSON reader does not need (both are off by default;
// they are named here because the answers' bytes depend on them). Invalid
// UTF-8, which the plant rules never let in, would become U+FFFD rather
// than fail an answer.
var options = json.JoinOptions(
	jsontext.EscapeForHTML(false),
	jsontext.EscapeForJS(false),
	jsontext.AllowInvalidUTF8(true),
)

// Fields are the plant of id that p carries, as the plant rules take them:
// the reverse of FromDomain, an optional member left out (or empty, which
// the service never renders) absent.
func (p Plant) Fields(id int64) domain.PlantFields {
	f := domain.PlantFields{ID: id, Name: p.Name}
	if p.Tag != "" {
		f.Tag = &p.Tag
	}
	return f
}

// AppendItem appends p as a PlantItem: {"id":7,"name":"...","tag":"..."}.
func AppendItem(dst []byte, p domain.Plant) []byte { return appendItem(dst, FromDomain(p)) }

// AppendPlant appends p as a Plant: {"name":"...","tag":"..."}.
func AppendPlant(dst []byte, p domain.Plant) []byte { return appendPlant(dst, FromDomain(p).Plant) }

// CutPlant returns the Plant of item, a PlantItem as AppendItem renders it:
// the same object without its first member, the id. It writes the Plant
// over item's own bytes, which it returns the tail of, so that an answer
// that needs both renders the plant once.
func CutPlant(item []byte) []byte {
	// The id is an integer, so the first comma ends it.
	comma := bytes.IndexByte(item, ',')
	item[comma] = '{'
	return item[comma:]
}

func appendItem(dst []byte, it Item) []byte {
	s := getScratch(dst)
	s.item = it
	s.marshal(&s.item)
	return s.done()
}

func appendPlant(dst []byte, p Plant) []byte {
	s := getScratch(dst)
	s.item.Plant = p
	s.marshal(&s.item.Plant)
	return s.done()
}

// scratch is what one call needs on the heap, recycled: the buffer that
// appends to the caller's slice and the value handed to the encoder.
type scratch struct {
	buf      bytes.Buffer
	item     Item
	envelope Envelope
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch(dst []byte) *scratch {
	s := scratchPool.Get().(*scratch)
	s.buf = *bytes.NewBuffer(dst)
	return s
}

// marshal encodes v after what the buffer holds. The transport types hold
// only strings and an integer, so with invalid UTF-8 allowed nothing can
// fail.
func (s *scratch) marshal(v any) {
	if err := json.MarshalWrite(&s.buf, v, options); err != nil {
		panic("plantjson: " + err.Error())
	}
}

// done returns the caller's slice, grown, and recycles s without keeping
// a reference to it.
func (s *scratch) done() []byte {
	out := s.buf.Bytes()
	s.buf = bytes.Buffer{}
	s.item, s.envelope = Item{}, Envelope{}
	scratchPool.Put(s)
	return out
}
