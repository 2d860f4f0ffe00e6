package domain

import (
	"errors"
	"strings"
)

// ErrInvalid is the root of every validation failure; test for it with errors.Is.
var ErrInvalid = errors.New("invalid")

// ErrConflict means a plant with the same id exists with a different name or tag.
var ErrConflict = errors.New("a plant with this id exists with a different name or tag")

// ErrNotFound means no plant is stored under the id asked for: it was never
// created, or it was deleted. Test for it with errors.Is.
var ErrNotFound = errors.New("no such plant")

// NotFoundError names the id that has no plant. It matches ErrNotFound.
type NotFoundError struct{ ID ID }

func (e *NotFoundError) Error() string {
	return "no plant with id " + e.ID.String()
}

// Unwrap makes every NotFoundError match ErrNotFound.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// FieldError says which field broke which rule. It matches ErrInvalid.
type FieldError struct {
	Field   string // the field as clients name it: "id", "name", "tag"
	Problem string // what is wrong, for people: "must not be empty"
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Unwrap makes every FieldError match ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// FieldErrors is every field problem of one request, in field order.
type FieldErrors []*FieldError

func (es FieldErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap exposes each FieldError to errors.Is and errors.As.
func (es FieldErrors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}
