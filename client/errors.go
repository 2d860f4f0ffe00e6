package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/plantstore/plantstore/client/internal/oapi"
)

// The API's error codes, the Code of an *Error: stable, one per cause
// (docs/openapi.yaml's table). Later versions of the API may add codes.
const (
	CodeMalformedBody        = 40001 // 400: the body is not one JSON object
	CodeInvalidField         = 40002 // 400: a field or parameter breaks a rule; the message names it
	CodeMissingToken         = 40101 // 401: no bearer token
	CodeInvalidToken         = 40102 // 401: the token is not acceptable (expired, bad signature, ...)
	CodeInsufficientScope    = 40301 // 403: the token lacks the operation's scope
	CodeNoSuchRoute          = 40401 // 404: no such route: is the base URL right?
	CodeNoSuchPlant          = 40402 // 404: no plant has the id
	CodeMethodNotAllowed     = 40501 // 405
	CodeConflict             = 40901 // 409: another plant has the id
	CodeFeedExpired          = 41001 // 410: the event feed's cursor is older than its retention
	CodePreconditionFailed   = 41201 // 412: the plant is not in the state a Condition expected
	CodeBodyTooLarge         = 41301 // 413
	CodeUnsupportedMediaType = 41501 // 415
	CodeInternalError        = 50001 // 500: the message is the request id
	CodeUnavailable          = 50301 // 503: retry after RetryAfter
)

// Error is an answer of the API that refused a call: a status other than
// the call's success. Use errors.As to read it, or errors.Is with the
// sentinels below for the common cases.
type Error struct {
	// StatusCode is the HTTP status (404, 409, 503, ...).
	StatusCode int
	// Code is the API's error code (CodeNoSuchPlant, ...); 0 when the answer
	// had no Error body, as from a proxy in front of the service.
	Code int
	// Message says what was wrong, for people; it names the offending field
	// where there is one. Without an Error body, it is the status text.
	Message string
	// RequestID is the answer's X-Request-ID, which the service's logs and
	// traces carry: quote it when reporting a fault.
	RequestID string
	// RetryAfter is how long the answer asks to wait before trying again
	// (its Retry-After, which a 503 carries); 0 without one.
	RetryAfter time.Duration
}

// Error says the status, the code, the message and the request id.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plantstore: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Code != 0 {
		fmt.Fprintf(&b, ", error %d", e.Code)
	}
	if e.Message != "" && e.Message != http.StatusText(e.StatusCode) {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// Sentinels that errors.Is matches against an *Error.
var (
	// ErrNotFound: no plant has the id (404, CodeNoSuchPlant). A 404 for a
	// route the service does not have (a base URL with a wrong path) is
	// not ErrNotFound: its Code is CodeNoSuchRoute.
	ErrNotFound = errors.New("plantstore: no such plant")
	// ErrConflict: a create whose id holds a different plant (409).
	ErrConflict = errors.New("plantstore: another plant has this id")
	// ErrPreconditionFailed: a Condition did not hold, and nothing changed
	// (412). Read the plant again for its state and ETag.
	ErrPreconditionFailed = errors.New("plantstore: precondition failed")
	// ErrFeedExpired: the feed's cursor is older than the service keeps
	// events (410), so events that followed it may be gone. List the plants
	// again, then read the feed from its start (Feed with FeedOptions{}).
	ErrFeedExpired = errors.New("plantstore: the feed's cursor has expired")
	// ErrUnavailable: the service cannot answer now (503); try again after
	// the Error's RetryAfter. A write answered so may or may not have been
	// made.
	ErrUnavailable = errors.New("plantstore: unavailable")
	// ErrUnauthorized: no token, or one the service does not accept (401).
	ErrUnauthorized = errors.New("plantstore: unauthorized")
	// ErrForbidden: the token lacks the operation's scope (403).
	ErrForbidden = errors.New("plantstore: forbidden")
)

// Is reports whether target is the sentinel of e's status or code.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound && e.Code == CodeNoSuchPlant
	case ErrConflict:
		return e.StatusCode == http.StatusConflict
	case ErrPreconditionFailed:
		return e.StatusCode == http.StatusPreconditionFailed
	case ErrFeedExpired:
		return e.StatusCode == http.StatusGone && e.Code == CodeFeedExpired
	case ErrUnavailable:
		return e.StatusCode == http.StatusServiceUnavailable
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	}
	return false
}

// ErrNotModified matches, with errors.Is, what Get answers when an
// IfNoneMatch condition lists the plant's current ETag (304 Not Modified):
// a *NotModifiedError, with the zero Plant. The copy the caller holds is
// current. It is not an *Error: nothing was refused.
var ErrNotModified = errors.New("plantstore: not modified")

// NotModifiedError is Get's answer to an IfNoneMatch condition that lists
// the plant's current ETag. Read it with errors.As when the condition
// listed several ETags and the caller needs to know which is current.
type NotModifiedError struct {
	// ETag is the plant's current ETag, as the answer gave it (quotes
	// included): one of those the condition listed, compared weakly.
	ETag string
}

// Error says the plant is not modified, and its ETag.
func (e *NotModifiedError) Error() string { return "plantstore: not modified (ETag " + e.ETag + ")" }

// Is makes errors.Is(err, ErrNotModified) hold.
func (e *NotModifiedError) Is(target error) bool { return target == ErrNotModified }

// errorOf is the *Error of resp, whose body is body, received at now.
func errorOf(resp *http.Response, body []byte, now time.Time) *Error {
	e := &Error{
		StatusCode: resp.StatusCode,
		Message:    http.StatusText(resp.StatusCode),
		RequestID:  resp.Header.Get("X-Request-ID"),
		RetryAfter: retryAfter(resp.Header.Get("Retry-After"), now),
	}
	var b oapi.Error
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil && mt == "application/json" &&
		json.Unmarshal(body, &b) == nil && b.Error != 0 {
		e.Code, e.Message = int(b.Error), b.Message
	}
	return e
}

// retryAfter is the wait a Retry-After value asks for: delay-seconds or an
// HTTP date (RFC 9110 §10.2.3); 0 when v is neither.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}
