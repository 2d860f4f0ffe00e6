package application

import "errors"

// ErrUnavailable means the store cannot be reached or the service is shutting
// down. Nothing was stored; the client may retry later.
var ErrUnavailable = errors.New("the store is unavailable")

// ErrInvalidToken means a bearer token was presented but cannot be accepted.
// Verifiers wrap it in a *TokenError that says why.
var ErrInvalidToken = errors.New("invalid token")

// TokenError says why a token was refused. Reason is a short stable word for
// metrics ("expired", "signature", ...); Description is safe to show clients.
type TokenError struct {
	Reason      string
	Description string
}

func (e *TokenError) Error() string { return "invalid token: " + e.Description }

// Unwrap makes every TokenError match ErrInvalidToken.
func (e *TokenError) Unwrap() error { return ErrInvalidToken }

// ErrForbidden means the principal lacks a scope the use case requires.
var ErrForbidden = errors.New("insufficient scope")

// ScopeError names the scope that was missing. It matches ErrForbidden.
type ScopeError struct{ Scope string }

func (e *ScopeError) Error() string { return "insufficient scope: " + e.Scope + " is required" }

// Unwrap makes every ScopeError match ErrForbidden.
func (e *ScopeError) Unwrap() error { return ErrForbidden }
