package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"
)

// requestInfo is what the outermost middleware learns about a request for its
// access line; inner handlers fill in the subject.
type requestInfo struct {
	id      string
	subject string
	// answered, when set, is when the answer was sent before the handler
	// returned (a refusal that then drops the rest of the body); the
	// request's duration ends there.
	answered time.Time
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return info
}

// recordingWriter remembers the status and size of a response: the body
// bytes sent, none for a HEAD, whose body net/http drops.
type recordingWriter struct {
	http.ResponseWriter
	status int
	bytes  int
	head   bool
}

func (w *recordingWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	if !w.head {
		w.bytes += n
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe counts the request in flight, assigns its id, sets its deadline,
// starts its span when tracing is on, recovers panics as 50001 and writes
// one access line and the request metrics for every request.
func (a *API) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		a.inFlight.Add(1)
		defer a.inFlight.Add(-1)
		info := &requestInfo{id: a.ids.Assign(w, r)}
		if a.draining.Load() {
			// net/http closes the connection after a response that says so.
			w.Header()["Connection"] = closeConnection
		}
		rw := &recordingWriter{ResponseWriter: w, head: r.Method == http.MethodHead}
		var span trace.Span
		if a.tracer != nil {
			r, span = a.startRequest(r)
		}
		ctx := context.WithValue(r.Context(), requestInfoKey{}, info)
		if a.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, a.timeout)
			defer cancel()
		}
		r = r.WithContext(ctx)

		defer func() {
			if rec := recover(); rec != nil {
				if rec == http.ErrAbortHandler {
					panic(rec)
				}
				a.deps.Log.ErrorContext(r.Context(), "panic serving request",
					"request_id", info.id, "panic", rec, "stack", string(debug.Stack()))
				if rw.status == 0 {
					a.writeError(rw, r, errPanic)
				}
			}
			route := a.finish(r, rw, info, start)
			if span != nil {
				endRequest(span, r.Method, route, rw.status, info.id)
			}
		}()
		next.ServeHTTP(rw, r)
	})
}

var closeConnection = []string{"close"}

// maxLoggedPath bounds the path an access line repeats.
const maxLoggedPath = 256

// logPath is the request's path as the access line shows it: escaped, so
// that no byte a client sent can break the line or fake another, without
// the query string, which may carry what does not belong in logs, and cut at
// maxLoggedPath bytes, never inside an escape.
func logPath(r *http.Request) string {
	p := r.URL.EscapedPath()
	if len(p) <= maxLoggedPath {
		return p
	}
	cut := maxLoggedPath
	if i := strings.LastIndexByte(p[cut-2:cut], '%'); i >= 0 {
		cut -= 2 - i
	}
	return p[:cut]
}

// maxLoggedSubject bounds the token subject an access line repeats: a
// token may carry a sub of kilobytes, which every line of its requests
// would repeat in full.
const maxLoggedSubject = 256

// logSubject is the subject the access line shows: cut at
// maxLoggedSubject bytes, never inside a character.
func logSubject(s string) string {
	if len(s) <= maxLoggedSubject {
		return s
	}
	cut := maxLoggedSubject
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// errPanic is an unexpected fault; classify maps it to 50001.
var errPanic = panicError{}

type panicError struct{}

func (panicError) Error() string { return "panic" }

// finish writes the access line and records the request metrics. It
// returns the request's route, as both name it.
func (a *API) finish(r *http.Request, rw *recordingWriter, info *requestInfo, start time.Time) string {
	end := info.answered
	if end.IsZero() {
		end = time.Now()
	}
	elapsed := end.Sub(start)
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	route := "unmatched"
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		if p := rctx.RoutePattern(); p != "" {
			route = p
		}
	}
	a.metrics.observeRequest(route, r.Method, rw.status, elapsed)
	if !a.deps.Log.Enabled(r.Context(), slog.LevelInfo) {
		return route
	}
	if a.tracer != nil {
		// The trace id leads from the line to the request's trace. A
		// separate call keeps the untraced line as cheap as before.
		a.deps.Log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("route", route),
			slog.String("path", logPath(r)),
			slog.Int("status", rw.status),
			slog.Duration("duration", elapsed),
			slog.Int("bytes", rw.bytes),
			slog.String("request_id", info.id),
			slog.String("subject", logSubject(info.subject)),
			slog.String("trace_id", traceID(r.Context())),
		)
		return route
	}
	a.deps.Log.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.String("path", logPath(r)),
		slog.Int("status", rw.status),
		slog.Duration("duration", elapsed),
		slog.Int("bytes", rw.bytes),
		slog.String("request_id", info.id),
		slog.String("subject", logSubject(info.subject)),
	)
	return route
}
