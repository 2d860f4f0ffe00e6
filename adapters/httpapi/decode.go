package httpapi

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/plantstore/plantstore/domain"
)

// maxNesting bounds how deep arrays and objects may nest inside a request
// body, so a hostile body cannot exhaust the stack.
const maxNesting = 32

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

// decoder is a strict, allocation-aware JSON parser for one NewPlant object.
// encoding/json accepts duplicate keys, case-insensitive key matches and
// invalid UTF-8; the contract refuses all three, so the body is parsed here.
type decoder struct {
	data []byte
	pos  int
}

// fields collects what the top-level object held.
type fields struct {
	id, name, tag           bool // present
	idValue                 int64
	nameValue               string
	tagValue                *string
	idIsNumber, idIsFloat   bool
	idOutOfRange            bool
	nameIsString            bool
	tagIsString, tagIsNull  bool
	nameBadText, tagBadText bool // lone surrogate escapes
	problems                domain.FieldErrors
	unknown                 int // unknown fields seen
}

// decodeNewPlant parses body as a NewPlant. It returns a *syntaxError when the
// body is not one valid JSON object, else domain.FieldErrors when fields are
// missing, unknown, mistyped or break a domain rule.
func decodeNewPlant(body []byte) (domain.NewPlant, error) {
	d := decoder{data: body}
	var f fields
	if err := d.topLevel(&f); err != nil {
		return domain.NewPlant{}, err
	}
	return f.newPlant()
}

func (d *decoder) fail(problem string) *syntaxError {
	return &syntaxError{offset: d.pos, problem: problem}
}

func (d *decoder) topLevel(f *fields) error {
	if len(d.data) >= 3 && d.data[0] == 0xEF && d.data[1] == 0xBB && d.data[2] == 0xBF {
		return d.fail("a byte order mark is not allowed")
	}
	if !utf8.Valid(d.data) {
		return &syntaxError{offset: invalidUTF8Offset(d.data), problem: "invalid UTF-8"}
	}
	d.skipSpace()
	if d.pos == len(d.data) {
		return d.fail("empty body, expected a JSON object")
	}
	if d.data[d.pos] != '{' {
		return d.fail("expected a JSON object")
	}
	d.pos++
	var unknown keySet
	for first := true; ; first = false {
		d.skipSpace()
		if first && d.peek() == '}' {
			d.pos++
			break
		}
		keyStart := d.pos
		key, _, err := d.str()
		if err != nil {
			return err
		}
		known := key == "id" || key == "name" || key == "tag"
		if f.seen(key) || (!known && unknown.add(key)) {
			d.pos = keyStart
			return d.fail("duplicate key " + strconv.Quote(echo(key)))
		}
		d.skipSpace()
		if d.peek() != ':' {
			return d.fail("expected ':' after object key")
		}
		d.pos++
		d.skipSpace()
		switch key {
		case "id":
			err = d.idValue(f)
		case "name":
			err = d.nameValue(f)
		case "tag":
			err = d.tagValue(f)
		default:
			if f.unknown++; f.unknown <= maxUnknownNamed {
				f.problems = append(f.problems, &domain.FieldError{Field: echo(key), Problem: "unknown field"})
			}
			err = d.skipValue(1)
		}
		if err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case '}':
			d.pos++
		default:
			return d.fail("expected ',' or '}' after object member")
		}
		break
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return d.fail("unexpected data after the JSON object")
	}
	return nil
}

func (f *fields) seen(key string) bool {
	switch key {
	case "id":
		return f.id
	case "name":
		return f.name
	case "tag":
		return f.tag
	}
	return false
}

// keySet finds a duplicate among an object's keys. A linear scan is cheapest
// for the usual handful of keys; a map keeps a hostile object with thousands
// of keys linear.
type keySet struct {
	list []string
	set  map[string]struct{}
}

// add records key and reports whether it was already there.
func (s *keySet) add(key string) (dup bool) {
	if s.set == nil && len(s.list) < 16 {
		for _, k := range s.list {
			if k == key {
				return true
			}
		}
		s.list = append(s.list, key)
		return false
	}
	if s.set == nil {
		s.set = make(map[string]struct{}, 32)
		for _, k := range s.list {
			s.set[k] = struct{}{}
		}
	}
	if _, ok := s.set[key]; ok {
		return true
	}
	s.set[key] = struct{}{}
	return false
}

func (d *decoder) idValue(f *fields) error {
	f.id = true
	c := d.peek()
	if c != '-' && (c < '0' || c > '9') {
		return d.skipValue(1)
	}
	start := d.pos
	isFloat, err := d.number()
	if err != nil {
		return err
	}
	f.idIsNumber, f.idIsFloat = true, isFloat
	if !isFloat {
		f.idValue, f.idOutOfRange = parseInt64(d.data[start:d.pos])
	}
	return nil
}

func (d *decoder) nameValue(f *fields) error {
	f.name = true
	if d.peek() != '"' {
		return d.skipValue(1)
	}
	s, ok, err := d.str()
	f.nameIsString, f.nameValue, f.nameBadText = true, s, !ok
	return err
}

func (d *decoder) tagValue(f *fields) error {
	f.tag = true
	switch d.peek() {
	case '"':
		s, ok, err := d.str()
		f.tagIsString, f.tagValue, f.tagBadText = true, &s, !ok
		return err
	case 'n':
		f.tagIsNull = true
		return d.literal("null")
	}
	return d.skipValue(1)
}

// newPlant applies the field rules once the body is known to be valid JSON.
func (f *fields) newPlant() (domain.NewPlant, error) {
	problems := f.problems
	add := func(field, problem string) {
		problems = append(problems, &domain.FieldError{Field: field, Problem: problem})
	}
	if more := f.unknown - maxUnknownNamed; more > 0 {
		add("body", strconv.Itoa(more)+" more unknown fields")
	}
	var np domain.NewPlant
	switch {
	case !f.id:
		add("id", "is required")
	case !f.idIsNumber || f.idIsFloat:
		add("id", "must be an integer")
	case f.idOutOfRange:
		add("id", "must be within the signed 64-bit range")
	default:
		np.ID = domain.ID(f.idValue)
	}
	switch {
	case !f.name:
		add("name", "is required")
	case !f.nameIsString:
		add("name", "must be a string")
	case f.nameBadText:
		add("name", "must be valid Unicode text (lone surrogate escape)")
	default:
		n, err := domain.ParseName(f.nameValue)
		if err != nil {
			problems = append(problems, err.(*domain.FieldError))
		}
		np.Name = n
	}
	switch {
	case !f.tag || f.tagIsNull:
		np.Tag = domain.NoTag
	case !f.tagIsString:
		add("tag", "must be a string or null")
	case f.tagBadText:
		add("tag", "must be valid Unicode text (lone surrogate escape)")
	default:
		t, err := domain.ParseTag(*f.tagValue)
		if err != nil {
			problems = append(problems, err.(*domain.FieldError))
		}
		np.Tag = t
	}
	if problems != nil {
		return domain.NewPlant{}, problems
	}
	return np, nil
}

// parseInt64 parses a JSON integer literal already checked by number.
func parseInt64(b []byte) (v int64, outOfRange bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var u uint64
	for _, c := range b {
		if u > (1<<64-1)/10 {
			return 0, true
		}
		u = u*10 + uint64(c-'0')
		if u < uint64(c-'0') {
			return 0, true
		}
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), false //nolint:gosec // -u wraps to MinInt64 exactly when u == 1<<63
	case !neg && u < 1<<63:
		return int64(u), false
	}
	return 0, true
}

func (d *decoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// skipValue checks one JSON value of any kind without keeping it.
func (d *decoder) skipValue(depth int) error {
	switch c := d.peek(); {
	case c == '"':
		_, _, err := d.str()
		return err
	case c == '{':
		return d.skipObject(depth)
	case c == '[':
		return d.skipArray(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := d.number()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case d.pos == len(d.data):
		return d.fail("unexpected end of body")
	}
	return d.fail("invalid character " + strconv.QuoteRune(rune(d.data[d.pos])))
}

func (d *decoder) skipObject(depth int) error {
	if depth > maxNesting {
		return d.fail("nesting deeper than " + strconv.Itoa(maxNesting) + " levels")
	}
	d.pos++ // '{'
	var keys keySet
	for first := true; ; first = false {
		d.skipSpace()
		if first && d.peek() == '}' {
			d.pos++
			return nil
		}
		keyStart := d.pos
		key, _, err := d.str()
		if err != nil {
			return err
		}
		if keys.add(key) {
			d.pos = keyStart
			return d.fail("duplicate key " + strconv.Quote(echo(key)))
		}
		d.skipSpace()
		if d.peek() != ':' {
			return d.fail("expected ':' after object key")
		}
		d.pos++
		d.skipSpace()
		if err := d.skipValue(depth + 1); err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return nil
		default:
			return d.fail("expected ',' or '}' after object member")
		}
	}
}

func (d *decoder) skipArray(depth int) error {
	if depth > maxNesting {
		return d.fail("nesting deeper than " + strconv.Itoa(maxNesting) + " levels")
	}
	d.pos++ // '['
	for first := true; ; first = false {
		d.skipSpace()
		if first && d.peek() == ']' {
			d.pos++
			return nil
		}
		if err := d.skipValue(depth + 1); err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return nil
		default:
			return d.fail("expected ',' or ']' after array element")
		}
	}
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.fail("invalid literal, expected " + word)
	}
	d.pos += len(word)
	return nil
}

// number checks a JSON number and reports whether it has a fraction or an
// exponent (and so is not an integer literal).
func (d *decoder) number() (isFloat bool, err error) {
	if d.peek() == '-' {
		d.pos++
	}
	switch c := d.peek(); {
	case c == '0':
		d.pos++
	case c >= '1' && c <= '9':
		d.digits()
	default:
		return false, d.fail("invalid number")
	}
	if d.peek() == '.' {
		d.pos++
		if !isDigit(d.peek()) {
			return false, d.fail("invalid number")
		}
		d.digits()
		isFloat = true
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.pos++
		if c := d.peek(); c == '+' || c == '-' {
			d.pos++
		}
		if !isDigit(d.peek()) {
			return false, d.fail("invalid number")
		}
		d.digits()
		isFloat = true
	}
	return isFloat, nil
}

func (d *decoder) digits() {
	for isDigit(d.peek()) {
		d.pos++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// str parses a JSON string. ok is false when an escape encodes a lone UTF-16
// surrogate, which is valid JSON syntax but not Unicode text.
func (d *decoder) str() (s string, ok bool, err error) {
	if d.peek() != '"' {
		return "", false, d.fail("expected a string")
	}
	d.pos++
	start := d.pos
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			s = string(d.data[start:d.pos])
			d.pos++
			return s, true, nil
		case c == '\\':
			return d.escapedStr(start)
		case c < 0x20:
			return "", false, d.fail("control character in string")
		}
		d.pos++
	}
	return "", false, d.fail("unterminated string")
}

// escapedStr finishes a string that holds escapes, from its first escape on.
func (d *decoder) escapedStr(start int) (string, bool, error) {
	buf := make([]byte, 0, len(d.data)-start)
	buf = append(buf, d.data[start:d.pos]...)
	ok := true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(buf), ok, nil
		case c < 0x20:
			return "", false, d.fail("control character in string")
		case c != '\\':
			buf = append(buf, c)
			d.pos++
			continue
		}
		d.pos++ // '\\'
		switch d.peek() {
		case '"', '\\', '/':
			buf = append(buf, d.data[d.pos])
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := d.hex4(d.pos + 1)
			if err != nil {
				return "", false, err
			}
			d.pos += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if r < 0xDC00 && d.pos+2 < len(d.data) && d.data[d.pos+1] == '\\' && d.data[d.pos+2] == 'u' {
					if r2, err = d.hex4(d.pos + 3); err != nil {
						return "", false, err
					}
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					d.pos += 6
				} else {
					ok = false
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", false, d.fail("invalid escape in string")
		}
		d.pos++
	}
	return "", false, d.fail("unterminated string")
}

func (d *decoder) hex4(at int) (rune, error) {
	if at+4 > len(d.data) {
		d.pos = len(d.data)
		return 0, d.fail("unterminated string")
	}
	var r rune
	for _, c := range d.data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			d.pos = at
			return 0, d.fail("invalid \\u escape in string")
		}
	}
	return r, nil
}

// echo shortens a client-supplied key for an error message.
func echo(key string) string {
	if utf8.RuneCountInString(key) <= maxKeyEcho {
		return key
	}
	n := 0
	for i := range key {
		if n == maxKeyEcho {
			return key[:i] + "…"
		}
		n++
	}
	return key
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}
