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

// The messages of the API's refusals at its connection limit, and at a
// client address's share of it.
const (
	atConnLimit   = "the service is at its connection limit, retry later"
	atClientShare = "this client address holds its share of the service's connections, retry later"
)

// Admission is how many connections the API's listener holds open.
type Admission struct {
	// MaxConnections caps the open connections; 0 is
	// DefaultMaxConnections.
	MaxConnections int
	// PerClient caps those of one client address (an IPv4 address or an
	// IPv6 /64); 0 is the whole cap.
	PerClient int
}

// ConnLimit is a cap of open connections for the API's listener. A
// connection refused at the cap is answered like every answer of the API:
// 503 with the Error body 50301, Retry-After and a request id; it is logged
// with an access line under the route "connection_limit" and counted, as
// are the connections closed to make room, at the head's deadline, or
// unanswered.
func (a *API) ConnLimit(adm Admission) *ConnLimit {
	log := a.deps.Log
	return newConnLimit(adm.MaxConnections, adm.PerClient, connHooks{
		refusal: a.connLimitAnswer,
		shed: func(why shedReason, waited time.Duration) {
			a.metrics.connectionShed(shedActions[why])
			if why == evictedIdle || why == evictedWaiting {
				log.LogAttrs(context.Background(), slog.LevelInfo, shedMessages[why],
					slog.Int("max_connections", adm.MaxConnections), slog.Duration("waited", waited))
			}
		},
		open: func(n int) { a.metrics.openConnections.Set(float64(n)) },
	})
}

// shedActions are the action labels of plantstore_http_connections_shed_total,
// shedMessages the log lines of a connection closed to make room.
var (
	shedActions = map[shedReason]string{
		evictedIdle:    "closed_idle",
		evictedWaiting: "closed_no_request",
		headTimeout:    "head_timeout",
		dropped:        "dropped",
	}
	shedMessages = map[shedReason]string{
		evictedIdle:    "closed an idle connection at the connection limit",
		evictedWaiting: "closed a connection that sent no request at the connection limit",
	}
)

// connLimitAnswer is the whole answer to a connection refused at the API's
// connection limit, or at its client's share of it. Its request was not
// read, so the access line has no method or path.
func (a *API) connLimitAnswer(ofClient bool) []byte {
	message, action := atConnLimit, "refused"
	if ofClient {
		message, action = atClientShare, "refused_client"
	}
	id := a.ids.New()
	body := errorJSON(50301, message)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\nRetry-After: " + retryAfterSeconds + "\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(body)))
	b.WriteString("\r\n" + http.CanonicalHeaderKey(requestid.Header) + ": ")
	b.WriteString(id)
	b.WriteString("\r\n\r\n")
	b.Write(body)
	a.metrics.connectionShed(action)
	a.metrics.countRequest("connection_limit", "", http.StatusServiceUnavailable)
	a.deps.Log.LogAttrs(context.Background(), slog.LevelInfo, "request",
		slog.String("route", "connection_limit"),
		slog.Int("status", http.StatusServiceUnavailable),
		slog.Int("bytes", len(body)),
		slog.String("request_id", id),
		slog.String("error", message),
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
	return newConnLimit(max, max, connHooks{
		refusal: func(bool) []byte { warn("refused a connection at the connection limit"); return answer },
		shed: func(why shedReason, _ time.Duration) {
			if why == evictedIdle || why == evictedWaiting {
				warn(shedMessages[why])
			}
		},
		open: func(int) {},
	})
}
