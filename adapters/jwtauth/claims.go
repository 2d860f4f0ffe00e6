package jwtauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// errScopeClaim marks a scope or scp claim of the wrong JSON type.
var errScopeClaim = errors.New("scope claim is neither a string nor an array of strings")

// tokenClaims is what a token may say about its bearer. Its times replace
// those of jwt.RegisteredClaims, which also take a string holding a number.
type tokenClaims struct {
	jwt.RegisteredClaims
	ExpiresAt numericDate `json:"exp"`
	NotBefore numericDate `json:"nbf"`
	IssuedAt  numericDate `json:"iat"`
	Scope     scopeList   `json:"scope"`
	Scp       scopeList   `json:"scp"`
}

// The times the parser validates.
func (c *tokenClaims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt.at, nil }
func (c *tokenClaims) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore.at, nil }
func (c *tokenClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt.at, nil }

// errNumericDate marks a time claim that is not a JSON number.
var errNumericDate = errors.New("time claim is not a number")

// numericDate is a time claim: a JSON number of seconds since the epoch
// (RFC 7519 §2), not a string; nil when absent or null.
type numericDate struct{ at *jwt.NumericDate }

// UnmarshalJSON implements json.Unmarshaler.
func (d *numericDate) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		d.at = nil
		return nil
	case len(data) == 0 || data[0] == '"':
		return errNumericDate
	}
	if f, err := strconv.ParseFloat(string(data), 64); err == nil && math.Abs(f) > lastNumericDate {
		return errNumericDateRange
	}
	d.at = new(jwt.NumericDate)
	return d.at.UnmarshalJSON(data)
}

// lastNumericDate is the last second of the year 9999, the latest time a
// time claim may name. One past the seconds an int64 holds would wrap
// around to a time as far in the past (or stop at the latest, on other
// CPUs): an exp of 1e20 read as expired, an nbf of 1e20 as long valid.
const lastNumericDate = 253402300799

// errNumericDateRange marks a time claim past the year 9999, either way.
var errNumericDateRange = errors.New("time claim is past the year 9999")

// scopes merges scope and scp, keeping the first of any duplicates.
func (c *tokenClaims) scopes() []string {
	switch {
	case len(c.Scp) == 0:
		return c.Scope
	case len(c.Scope) == 0:
		return c.Scp
	}
	out := append([]string(nil), c.Scope...)
	for _, s := range c.Scp {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// scopeList reads a space-separated string (OAuth 2.0 "scope") or an array
// of strings (the "scp" of several identity providers). Either form is
// accepted in either claim, since issuers disagree.
type scopeList []string

// UnmarshalJSON implements json.Unmarshaler.
func (s *scopeList) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0 || bytes.Equal(data, []byte("null")):
		*s = nil
		return nil
	case data[0] == '"' && bytes.IndexByte(data, '\\') < 0:
		// The decoder has checked the JSON already: without escapes the
		// string is the bytes between the quotes.
		*s = strings.Fields(string(data[1 : len(data)-1]))
		return nil
	case data[0] == '"':
		var str string
		if err := json.Unmarshal(data, &str); err != nil {
			return errScopeClaim
		}
		*s = strings.Fields(str)
		return nil
	case data[0] == '[':
		var list []string
		if err := json.Unmarshal(data, &list); err != nil {
			return errScopeClaim
		}
		out := make([]string, 0, len(list))
		for _, v := range list {
			out = append(out, strings.Fields(v)...)
		}
		*s = out
		return nil
	}
	return errScopeClaim
}
