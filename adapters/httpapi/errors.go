package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/plantstore/plantstore/adapters/internal/requestid"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Errors the HTTP adapter raises itself, before the use case is reached.
var (
	errNoToken          = errors.New("a bearer token is required")
	errNotFound         = errors.New("no such route")
	errMethodNotAllowed = errors.New("method not allowed on this route")
	errTooLarge         = errors.New("body: larger than the limit")
	errMediaType        = errors.New("Content-Type: must be application/json")
	errContentEncoding  = errors.New("Content-Encoding: not supported; send the body unencoded")
)

// statusClientClosedRequest is nginx's status of a request whose client
// closed the connection before the answer: never sent, only recorded.
const statusClientClosedRequest = 499

// retryAfterSeconds is what a 503 asks clients to wait before retrying.
const retryAfterSeconds = "1"

// problem is one row of the error table: the status and stable code that an
// error maps to, and whether its text is safe to show to clients.
type problem struct {
	target  error
	status  int
	code    int32
	showErr bool // the message is err.Error(); otherwise message is fixed
	message string
}

// errorTable is the contract's error table (docs/errors.md), in match order.
// Every error that reaches a client goes through it, in writeError.
var errorTable = []problem{
	{target: errNotFound, status: http.StatusNotFound, code: 40401, showErr: true},
	{target: errMethodNotAllowed, status: http.StatusMethodNotAllowed, code: 40501, showErr: true},
	{target: errNoToken, status: http.StatusUnauthorized, code: 40101, showErr: true},
	{target: application.ErrInvalidToken, status: http.StatusUnauthorized, code: 40102, showErr: true},
	{target: application.ErrForbidden, status: http.StatusForbidden, code: 40301, showErr: true},
	{target: errMediaType, status: http.StatusUnsupportedMediaType, code: 41501, showErr: true},
	{target: errPatchMediaType, status: http.StatusUnsupportedMediaType, code: 41501, showErr: true},
	{target: errContentEncoding, status: http.StatusUnsupportedMediaType, code: 41501, showErr: true},
	{target: errTooLarge, status: http.StatusRequestEntityTooLarge, code: 41301, showErr: true},
	{target: errSyntax, status: http.StatusBadRequest, code: 40001, showErr: true},
	{target: domain.ErrInvalid, status: http.StatusBadRequest, code: 40002, showErr: true},
	{target: domain.ErrNotFound, status: http.StatusNotFound, code: 40402, showErr: true},
	{target: domain.ErrConflict, status: http.StatusConflict, code: 40901, showErr: true},
	{target: application.ErrPreconditionFailed, status: http.StatusPreconditionFailed, code: 41201, showErr: true},
	{target: application.ErrFeedExpired, status: http.StatusGone, code: 41001, showErr: true},
	{target: errPagesBusy, status: http.StatusServiceUnavailable, code: 50301, showErr: true},
	{target: errShuttingDown, status: http.StatusServiceUnavailable, code: 50301, showErr: true},
	{target: application.ErrUnavailable, status: http.StatusServiceUnavailable, code: 50301, message: "the store is unavailable, retry later"},
	{target: context.DeadlineExceeded, status: http.StatusServiceUnavailable, code: 50301, message: "the store did not answer in time, retry later"},
}

// errSyntax is matched by every *syntaxError.
var errSyntax = errors.New("body is not one valid JSON object")

func (e *syntaxError) Unwrap() error { return errSyntax }

// classify finds err's row in the error table. Unknown errors are faults:
// 500 with a message that carries the request id and nothing else.
func classify(err error) (problem, bool) {
	for _, p := range errorTable {
		if errors.Is(err, p.target) {
			return p, true
		}
	}
	return problem{status: http.StatusInternalServerError, code: 50001}, false
}

// writeError answers r with the Error body for err, with the headers its row
// needs (WWW-Authenticate, Allow, Retry-After).
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && errors.Is(context.Cause(r.Context()), errShuttingDown) {
		// The stop's grace period ended with the request still waiting:
		// its client is still there, and gets the 503 rather than a
		// closed connection.
		err = errShuttingDown
		w.Header().Set("Connection", "close")
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away while its request waited: no one reads an
		// answer, and it is no fault of the service. The access line and
		// the metrics record 499, as nginx does.
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	p, known := classify(err)
	message := p.message
	switch {
	case !known:
		id := w.Header().Get(requestid.Header)
		// The request id and nothing else: it finds the logged error,
		// which stays in the log.
		message = id
		a.deps.Log.ErrorContext(r.Context(), "request failed", "request_id", id, "error", err.Error())
	case p.showErr:
		message = messageOf(err)
	}
	h := w.Header()
	switch p.code {
	case 40101:
		h.Set("WWW-Authenticate", `Bearer realm="plantstore"`)
	case 40102:
		desc := "the token is not acceptable"
		var te *application.TokenError
		if errors.As(err, &te) && te.Description != "" {
			desc = te.Description
		}
		h.Set("WWW-Authenticate", `Bearer realm="plantstore", error="invalid_token", error_description="`+quoteSafe(desc)+`"`)
	case 40301:
		var scope string
		var se *application.ScopeError
		if errors.As(err, &se) {
			scope = se.Scope
		}
		h.Set("WWW-Authenticate", `Bearer realm="plantstore", error="insufficient_scope", scope="`+quoteSafe(scope)+`"`)
	case 40501:
		allowed, _ := allowedMethods(a.router, r)
		h.Set("Allow", allowed)
	case 41501:
		if errors.Is(err, errContentEncoding) {
			// RFC 9110 §15.5.16: say which codings would have been accepted.
			h.Set("Accept-Encoding", "identity")
		}
	case 50301:
		h.Set("Retry-After", retryAfterSeconds)
	}
	writeErrorBody(w, p.status, p.code, message)
}

// maxProblemsNamed bounds how many problems an error message names, as
// maxUnknownNamed does for a body's unknown fields: a query string can carry
// thousands of them, and the answer stays small whatever was sent.
const maxProblemsNamed = 5

// messageOf is the message of err for clients: its text, naming at most
// maxProblemsNamed of its field problems and counting the rest.
func messageOf(err error) string {
	var problems domain.FieldErrors
	if !errors.As(err, &problems) || len(problems) <= maxProblemsNamed {
		return err.Error()
	}
	return problems[:maxProblemsNamed].Error() + "; and " + strconv.Itoa(len(problems)-maxProblemsNamed) + " more problems"
}

// quoteSafe keeps a value inside a quoted-string of a header: RFC 6750 allows
// printable ASCII except '"' and '\'.
func quoteSafe(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
					b[j] = '?'
				}
			}
			return string(b)
		}
	}
	return s
}

// writeErrorBody writes {"error": code, "message": message}.
func writeErrorBody(w http.ResponseWriter, status int, code int32, message string) {
	writeJSON(w, status, errorJSON(code, message))
}

// errorJSON is {"error": code, "message": message}.
func errorJSON(code int32, message string) []byte {
	buf := make([]byte, 0, 64+len(message))
	buf = append(buf, `{"error":`...)
	buf = strconv.AppendInt(buf, int64(code), 10)
	buf = append(buf, `,"message":`...)
	buf = appendJSONString(buf, message)
	return append(buf, '}')
}
