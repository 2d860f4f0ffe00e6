package httpapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// CreateUseCase is the create-plant use case as this adapter uses it;
// *application.CreatePlant implements it.
type CreateUseCase interface {
	Authorize(p application.Principal) error
	Create(ctx context.Context, p application.Principal, np domain.NewPlant) (domain.Plant, application.Outcome, error)
}

// createPlant serves POST /plants. The checks run in the contract's order:
// authentication, content type, size, JSON, fields (and no query
// parameter), then the store. Nothing of the body is read before the caller
// is authenticated and authorized.
func (a *API) createPlant(w http.ResponseWriter, r *http.Request) {
	principal, ok := a.admit(w, r, a.deps.Create)
	if !ok {
		return
	}
	if err := checkContentType(r); err != nil {
		a.refuseUnread(w, r, err)
		return
	}
	if err := checkContentEncoding(r); err != nil {
		a.refuseUnread(w, r, err)
		return
	}
	buf := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(buf)
	body, err := readBody(w, r, (*buf)[:0], a.maxBodyBytes)
	*buf = body[:0]
	if err != nil {
		a.refuseUnread(w, r, err)
		return
	}
	np, err := decodeNewPlant(body)
	if err = withQueryProblems(err, r); err != nil {
		a.writeError(w, r, err)
		return
	}
	plant, outcome, err := a.deps.Create.Create(r.Context(), principal, np)
	a.metrics.operation("create", createOutcome(outcome, err))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	// The ETag hashes the plant's PlantItem JSON, encoded once into the
	// buffer: the answer, a Plant, is that item without its id.
	item := plantjson.AppendItem(body[:0], plant)
	*buf = item[:0]
	setETag(w, etagOfItem(item))
	writeJSON(w, http.StatusOK, plantjson.CutPlant(item))
}

// checkContentType accepts exactly one Content-Type of application/json;
// parameters are fine, except a charset other than UTF-8.
func checkContentType(r *http.Request) error {
	values := r.Header.Values("Content-Type")
	if len(values) != 1 {
		return errMediaType
	}
	v := values[0]
	if v == "application/json" {
		return nil
	}
	mediaType, params, err := mime.ParseMediaType(v)
	if err != nil || mediaType != "application/json" {
		return errMediaType
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return errMediaType
	}
	return nil
}

// withQueryProblems adds the problems of the query, which a create does not
// take, to those of the body's fields, so that every 40002 of a request is
// reported together. A body that is not JSON (40001) is reported alone.
func withQueryProblems(bodyErr error, r *http.Request) error {
	problems := noQuery(r.URL.RawQuery)
	switch {
	case problems == nil:
		return bodyErr
	case bodyErr == nil:
		return problems
	}
	// Declared here, where they are needed: errors.As takes their
	// addresses, which puts them on the heap, once per create otherwise.
	var fields domain.FieldErrors
	if errors.As(bodyErr, &fields) {
		return append(fields[:len(fields):len(fields)], problems...)
	}
	var field *domain.FieldError
	if errors.As(bodyErr, &field) {
		return append(domain.FieldErrors{field}, problems...)
	}
	return bodyErr
}

// checkContentEncoding accepts a body without a content coding: a gzip
// body read as JSON would be refused as malformed, and a plain one labelled
// gzip stored as if it were what the client meant.
func checkContentEncoding(r *http.Request) error {
	for _, v := range r.Header.Values("Content-Encoding") {
		for coding := range strings.SplitSeq(v, ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				return errContentEncoding
			}
		}
	}
	return nil
}

// bodyPool recycles request body buffers; most bodies are far below 1 KiB.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// errUnreadable means the body could not be read (a broken chunked encoding,
// a client that went away); it is answered as a malformed body.
var errUnreadable = &syntaxError{offset: -1, problem: "could not be read"}

// errBodyLate means the body was still arriving at the request's deadline;
// it is answered as a malformed body, at the deadline.
var errBodyLate = &syntaxError{offset: -1, problem: "not received within the request's deadline"}

// readBody reads the whole body of r, answered through w, into buf,
// refusing more than limit bytes. A body still arriving at the request's
// deadline is cut off there: the store could no longer answer in time, and
// the client learns so at the deadline rather than once it sent the rest.
func readBody(w http.ResponseWriter, r *http.Request, buf []byte, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return buf, errTooLarge
	}
	ctx := r.Context()
	stop := context.AfterFunc(ctx, func() { _ = http.NewResponseController(w).SetReadDeadline(time.Now()) })
	defer stop()
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, errTooLarge
		}
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return buf, errBodyLate
		case err != nil:
			return buf, errUnreadable
		}
	}
}
