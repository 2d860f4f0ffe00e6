package httpapi

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/plantstore/plantstore/domain"
)

// maxKeyEcho bounds how much of an unknown key an error message repeats.
const maxKeyEcho = 64

// maxUnknownNamed bounds how many unknown fields an error message names; the
// rest are counted, so a body of many keys cannot make a huge answer.
const maxUnknownNamed = 5

// syntaxError means the body is not exactly one valid JSON object (40001).
type syntaxError struct {
	offset  int
	problem string
}

func (e *syntaxError) Error() string {
	if e.offset < 0 {
		return "body: " + e.problem
	}
	return "body: " + e.problem + " at offset " + strconv.Itoa(e.offset)
}

// newPlantJSON is a NewPlant as JSON carries it. The known members are kept
// as raw JSON, so that a value of the wrong type is a field problem reported
// with the others instead of an error that stops decoding. Unknown is the
// embedded fallback that collects every other member, in body order, so that
// each can be named.
//
// The strict rules of the contract are json v2's defaults: duplicate names
// (spelled with escapes or not, at any depth), invalid UTF-8 and lone
// surrogate escapes are syntax errors, names match case-sensitively, and
// nothing may follow the value.
type newPlantJSON struct {
	ID   jsontext.Value `json:"id"`
	Name jsontext.Value `json:"name"`
	Tag  jsontext.Value `json:"tag"`
	// The option is "embed" in this module and in encoding/json/v2 from Go
	// 1.27, "inline" in Go 1.25 and 1.26, whose experimental encoding/json/v2
	// this module becomes under GOEXPERIMENT=jsonv2. Each ignores the other's
	// name; without the right one, unknown members would pass unseen.
	//lint:ignore SA5008 both are json v2 options; the check knows encoding/json's only
	Unknown jsontext.Value `json:",embed,inline"`
}

// newPlantJSONs recycles decoding targets and the buffers of their members:
// that saves four of six allocations and about a third of the time of a
// decode (BenchmarkDecodeNewPlant). Nothing decoded aliases these buffers.
var newPlantJSONs = sync.Pool{New: func() any { return new(newPlantJSON) }}

// reset empties every member but keeps its buffer: Unmarshal leaves a member
// that the body lacks as it was, and an empty member means an absent one.
func (in *newPlantJSON) reset() {
	in.ID, in.Name, in.Tag, in.Unknown = in.ID[:0], in.Name[:0], in.Tag[:0], in.Unknown[:0]
}

// decodeNewPlant parses body as a NewPlant. It returns a *syntaxError when the
// body is not one valid JSON object, else domain.FieldErrors when fields are
// missing, unknown, mistyped or break a domain rule, all of them together.
func decodeNewPlant(body []byte) (domain.NewPlant, error) {
	if err := checkObject(body); err != nil {
		return domain.NewPlant{}, err
	}
	in := newPlantJSONs.Get().(*newPlantJSON)
	defer newPlantJSONs.Put(in)
	in.reset()
	if err := json.Unmarshal(body, in); err != nil {
		return domain.NewPlant{}, syntaxErrorOf(err)
	}
	id, idErr := parseID(in.ID)
	name, nameErr := parseName(in.Name)
	tag, tagErr := parseTag(in.Tag)
	problems := unknownFields(in.Unknown)
	for _, err := range []error{idErr, nameErr, tagErr} {
		if err == nil {
			continue // before fe is declared: errors.As would move it to the heap
		}
		var fe *domain.FieldError
		if errors.As(err, &fe) {
			problems = append(problems, fe)
		}
	}
	if problems != nil {
		return domain.NewPlant{}, problems
	}
	return domain.NewPlant{ID: id, Name: name, Tag: tag}, nil
}

// parseID reads the id member: PRODUCT §1 wants an integer literal, so 7 and
// -3 are ids, but 7.0, 7e0 and "7" are not, whatever number they mean.
func parseID(v jsontext.Value) (domain.ID, error) {
	switch {
	case len(v) == 0:
		return 0, &domain.FieldError{Field: "id", Problem: "is required"}
	case v.Kind() != '0' || bytes.ContainsAny(v, ".eE"):
		return 0, &domain.FieldError{Field: "id", Problem: "must be an integer"}
	}
	id, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, &domain.FieldError{Field: "id", Problem: "must be within the signed 64-bit range"}
	}
	return domain.ID(id), nil
}

// parseName reads the name member, which is required.
func parseName(v jsontext.Value) (domain.Name, error) {
	switch {
	case len(v) == 0:
		return domain.Name{}, &domain.FieldError{Field: "name", Problem: "is required"}
	case v.Kind() != '"':
		return domain.Name{}, &domain.FieldError{Field: "name", Problem: "must be a string"}
	}
	return domain.ParseName(text(v))
}

// parseTag reads the tag member; absent and null both mean no tag.
func parseTag(v jsontext.Value) (domain.Tag, error) {
	switch {
	case len(v) == 0 || v.Kind() == 'n':
		return domain.NoTag, nil
	case v.Kind() != '"':
		return domain.NoTag, &domain.FieldError{Field: "tag", Problem: "must be a string or null"}
	}
	return domain.ParseTag(text(v))
}

// checkObject refuses a body that is not an object before it is decoded: a
// JSON null would decode into an empty newPlantJSON without an error, and
// the contract answers every other kind of value as malformed, not as a
// field problem.
func checkObject(body []byte) *syntaxError {
	rest := bytes.TrimLeft(body, " \t\r\n")
	at := len(body) - len(rest)
	switch {
	case len(rest) == 0:
		return &syntaxError{offset: at, problem: "empty body, expected a JSON object"}
	case bytes.HasPrefix(rest, []byte("\uFEFF")):
		return &syntaxError{offset: at, problem: "a byte order mark is not allowed"}
	case rest[0] != '{':
		return &syntaxError{offset: at, problem: "expected a JSON object"}
	}
	return nil
}

// syntaxErrorOf turns the library's syntactic error into the 40001 answer.
// Its JSON pointer is left out: it repeats the client's keys at any length
// and depth. Any other error is a fault of this adapter, not of the body,
// and is passed on to be answered as one.
func syntaxErrorOf(err error) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return err
	}
	problem := "syntax error"
	switch {
	case se.Err == nil:
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		problem = "duplicate key " + strconv.Quote(echo(se.JSONPointer.LastToken()))
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		problem = "unexpected end of body"
	default:
		problem = se.Err.Error()
	}
	return &syntaxError{offset: int(se.ByteOffset), problem: problem}
}

// unknownFields names the first few members of unknown, an object that the
// decoder has already checked, and counts the rest.
func unknownFields(unknown jsontext.Value) domain.FieldErrors {
	if len(unknown) == 0 {
		return nil
	}
	var problems domain.FieldErrors
	dec := jsontext.NewDecoder(bytes.NewReader(unknown))
	_, _ = dec.ReadToken() // '{'
	n := 0
	for ; dec.PeekKind() == '"'; n++ {
		name, _ := dec.ReadToken()
		if n < maxUnknownNamed {
			problems = append(problems, &domain.FieldError{Field: echo(name.String()), Problem: "unknown field"})
		}
		_ = dec.SkipValue()
	}
	if more := n - maxUnknownNamed; more > 0 {
		problems = append(problems, &domain.FieldError{Field: "body", Problem: strconv.Itoa(more) + " more unknown fields"})
	}
	return problems
}

// text returns the text of s, a JSON string that the decoder has checked.
// Most strings hold no escape, and their text is what lies between the quotes.
func text(s jsontext.Value) string {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s[1 : len(s)-1])
	}
	b, _ := jsontext.AppendUnquote(nil, s)
	return string(b)
}

// echo shortens a client-supplied key for an error message.
func echo(key string) string {
	n := 0
	for i := range key {
		if n == maxKeyEcho {
			return key[:i] + "…"
		}
		n++
	}
	return key
}
