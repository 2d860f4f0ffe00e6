// Package client is the Go client of the Plant Store HTTP API.
//
// Build one with New and the service's address, and give it a bearer token
// with WithToken, or WithTokenSource for tokens that rotate (New fails
// without one: every operation needs it). A Client is made by New only;
// the zero Client fails every call.
//
//	c, err := client.New("http://localhost:8080", client.WithToken(token))
//	...
//	p, err := c.Create(ctx, client.NewPlant{ID: 7, Name: "Monstera deliciosa", Tag: "aroid"})
//
// Each plant operation is one method: Create, Get, List (an iterator that
// follows the pages), ListPage, Change and Delete. Every Plant the client
// answers carries its ETag, read, created, changed or listed (a list's and
// an event's plants too: the ETag GET answers for that state), which
// IfMatch and IfNoneMatch turn into conditional requests: a change or a
// delete that must not overwrite someone else's, or a read that answers
// ErrNotModified while the plant has not changed. Feed reads the event
// feed, every write committed, for a mirror of the plants: its Events
// iterator goes on from a saved Cursor, none twice, none skipped, and that
// cursor is the API's own, which any reader of the feed takes.
//
// # Errors
//
// An answer the API refuses is an *Error, with the HTTP status, the API's
// code (CodeConflict, ...), its message, the request id and, on a 503, how
// long to wait. errors.Is matches it against ErrNotFound, ErrConflict,
// ErrPreconditionFailed, ErrFeedExpired, ErrUnavailable, ErrUnauthorized
// and ErrForbidden; a conditional Get that finds the plant unchanged
// answers the zero Plant and a *NotModifiedError, which matches
// ErrNotModified and carries the current ETag. A request that got no answer (the service
// unreachable, a time-out, the context's cancellation) fails with the
// net/http error, wrapped.
//
// # Retries
//
// The client retries nothing by itself. A create and a change are safe to
// send again after a time-out or a 503 (a create is idempotent by id: the
// same plant again answers as a success); a delete sent again may answer
// ErrNotFound when the first one deleted the plant.
//
// The requests are made by code generated from the API's OpenAPI document,
// docs/openapi.yaml (package client/internal/oapi), so that they say what
// the document says. The package imports nothing of the service.
package client
