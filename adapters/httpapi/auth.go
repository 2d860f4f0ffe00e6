package httpapi

import (
	"net/http"

	"github.com/plantstore/plantstore/application"
)

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header; the scheme word is case-insensitive. It returns errNoToken when
// there is no header, another scheme, or an empty token.
func bearerToken(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return "", errNoToken
	}
	if len(values) > 1 {
		return "", &application.TokenError{Reason: "malformed", Description: "more than one Authorization header"}
	}
	h := values[0]
	const scheme = "bearer "
	if len(h) < len(scheme) || !equalFoldASCII(h[:len(scheme)], scheme) {
		return "", errNoToken
	}
	token := h[len(scheme):]
	for len(token) > 0 && token[0] == ' ' {
		token = token[1:]
	}
	if token == "" {
		return "", errNoToken
	}
	return token, nil
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}

// authenticate verifies the request's bearer token and records the subject
// for the access line.
func (a *API) authenticate(r *http.Request) (application.Principal, error) {
	token, err := bearerToken(r)
	if err != nil {
		return application.Principal{}, err
	}
	p, err := a.deps.Verifier.Verify(r.Context(), token)
	if err != nil {
		return application.Principal{}, err
	}
	if info := infoFrom(r.Context()); info != nil {
		info.subject = p.Subject
	}
	return p, nil
}

// authorizer is the scope check every use case offers this adapter, so that
// a refused caller is answered before any of the request is read.
type authorizer interface {
	Authorize(p application.Principal) error
}

// admit authenticates r and checks that the caller may use uc. On refusal it
// answers r, leaving the body unread, and returns false.
func (a *API) admit(w http.ResponseWriter, r *http.Request, uc authorizer) (application.Principal, bool) {
	p, err := a.authenticate(r)
	if err == nil {
		err = uc.Authorize(p)
	}
	if err != nil {
		a.metrics.authFailure(err)
		a.refuseUnread(w, r, err)
		return application.Principal{}, false
	}
	return p, true
}
