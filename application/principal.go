package application

import (
	"context"
	"slices"
)

// Principal is the authenticated caller of a use case.
type Principal struct {
	Subject string   // the token's sub claim, recorded as a plant's creator
	Scopes  []string // granted scopes
}

// HasScope reports whether the principal was granted scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// TokenVerifier turns a bearer token into a Principal. Errors match
// ErrInvalidToken (as a *TokenError) when the token is not acceptable; any
// other error is a fault of the verifier itself.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (Principal, error)
}

// Scopes are the scopes the use cases require of a principal: reads (get and
// list) need Read, writes (create and delete) need Write. An empty scope
// turns its check off.
type Scopes struct {
	Read  string
	Write string
}

// requireScope returns nil when scope is empty or p holds it, else a
// *ScopeError naming it.
func requireScope(p Principal, scope string) error {
	if scope != "" && !p.HasScope(scope) {
		return &ScopeError{Scope: scope}
	}
	return nil
}
