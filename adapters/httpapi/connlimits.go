package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/requestid"
)

// What the API's listener and the admin listener answer, log and count at
// their connection limits.

// atConnLimit is the message of the API's refusal at its connection limit.
const atConnLimit = "the service is at its connection limit, retry later"

// ConnLimit is a cap of max open connections for the API's listener. A
// connection refused at the cap is answered like every answer of the API:
// 503 with the Error body 50301, Retry-After and a request id; it is logged
// with an access line under the route "connection_limit" and counted, as are
// the idle connections closed to make room.
func (a *API) ConnLimit(max int) *ConnLimit {
	log := a.deps.Log
	return newConnLimit(max, connHooks{
		refusal: a.connLimitAnswer,
		closedIdle: func(idleFor time.Duration) {
			a.metrics.connectionShed("closed_idle")
			log.LogAttrs(context.Background(), slog.LevelInfo, "closed an idle connection at the connection limit",
				slog.Int("max_connections", max), slog.Duration("idle", idleFor))
		},
		open: func(n int) { a.metrics.openConnections.Set(float64(n)) },
	})
}

// connLimitAnswer is the whole answer to a connection refused at the API's
// connection limit. Its request was not read, so the access line has no
// method or path.
func (a *API) connLimitAnswer() []byte {
	id := a.ids.New()
	body := errorJSON(50301, atConnLimit)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\nRetry-After: " + retryAfterSeconds + "\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(body)))
	b.WriteString("\r\n" + http.CanonicalHeaderKey(requestid.Header) + ": ")
	b.WriteString(id)
	b.WriteString("\r\n\r\n")
	b.Write(body)
	a.metrics.connectionShed("refused")
	a.metrics.countRequest("connection_limit", "", http.StatusServiceUnavailable)
	a.deps.Log.LogAttrs(context.Background(), slog.LevelInfo, "request",
		slog.String("route", "connection_limit"),
		slog.Int("status", http.StatusServiceUnavailable),
		slog.Int("bytes", len(body)),
		slog.String("request_id", id),
		slog.String("error", atConnLimit),
	)
	return b.Bytes()
}

// NewConnLimit is a cap of max open connections for a listener other than
// the API's, the admin listener's: a connection refused at the cap is
// answered with a plain-text 503, as the admin listener answers, and logged
// as a warning, as is an idle connection closed to make room.
func NewConnLimit(max int, listener string, log *slog.Logger) *ConnLimit {
	const body = "at the connection limit\n"
	answer := []byte("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: " +
		retryAfterSeconds + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	warn := func(msg string) {
		log.LogAttrs(context.Background(), slog.LevelWarn, msg, slog.String("listener", listener), slog.Int("max_connections", max))
	}
	return newConnLimit(max, connHooks{
		refusal:    func() []byte { warn("refused a connection at the connection limit"); return answer },
		closedIdle: func(time.Duration) { warn("closed an idle connection at the connection limit") },
		open:       func(int) {},
	})
}
