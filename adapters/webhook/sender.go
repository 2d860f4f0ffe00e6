package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
)

// Defaults of Config.
const (
	DefaultTimeout             = 10 * time.Second
	DefaultMaxIdleConnsPerHost = 64
)

// UserAgent names the service to receivers, which may log or filter on it.
const UserAgent = "plantstore-webhooks/1"

// maxDrain bounds how much of an answer is read: enough for any sensible
// answer, whose connection then goes back to the pool; a larger one costs a
// connection instead of unbounded reading.
const maxDrain = 64 << 10

// maxHeaderBytes bounds a receiver's response headers (net/http allows 10 MB).
const maxHeaderBytes = 64 << 10

// Config tunes a Sender. The zero Config is ready for production.
type Config struct {
	// Timeout bounds one attempt, from dialling to the answer's status line
	// and headers. Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxIdleConnsPerHost is how many idle connections are kept per
	// receiver: at least the worker's concurrency, so that busy
	// receivers keep their connections. Zero means DefaultMaxIdleConnsPerHost.
	MaxIdleConnsPerHost int
	// Logger gets one debug line per attempt; failures are the worker's
	// to log. Nil logs nothing.
	Logger *slog.Logger
	// Transport replaces the Sender's own transport, for tests. The
	// timeouts and limits of the Sender's transport then do not apply, but
	// the attempt timeout does.
	Transport http.RoundTripper
}

// Sender posts signed events to their receivers: it implements
// application.EventSender. It is safe for concurrent use and keeps
// connections alive between calls; build one and share it.
//
// It posts through the transport directly rather than an http.Client: a
// round trip never follows redirects, which a signed event must not, and
// skips the client's per-request copies of the headers and URL.
type Sender struct {
	secret    Secret
	transport http.RoundTripper
	timeout   time.Duration
	log       *slog.Logger
}

var _ application.EventSender = (*Sender)(nil)

// NewSender returns a Sender that signs with secret. It refuses the zero
// Secret and a negative timeout.
func NewSender(secret Secret, cfg Config) (*Sender, error) {
	if secret.k == nil {
		return nil, errors.New("webhook sender: no secret")
	}
	if cfg.Timeout < 0 || cfg.MaxIdleConnsPerHost < 0 {
		return nil, errors.New("webhook sender: negative timeout or connection count")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxIdleConnsPerHost == 0 {
		cfg.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	transport := cfg.Transport
	if transport == nil {
		transport = newTransport(cfg.Timeout, cfg.MaxIdleConnsPerHost)
	}
	return &Sender{secret: secret, transport: transport, timeout: cfg.Timeout, log: cfg.Logger}, nil
}

// newTransport is net/http's default transport with limits fitted to many
// small posts to few hosts: more idle connections per host, every phase
// bounded by the attempt's timeout, small answers, no compression (answers
// are dropped unread).
func newTransport(timeout time.Duration, perHost int) *http.Transport {
	dialer := &net.Dialer{Timeout: min(timeout, 10*time.Second), KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           4 * perHost,
		MaxIdleConnsPerHost:    perHost,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    min(timeout, 10*time.Second),
		ResponseHeaderTimeout:  timeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
		DisableCompression:     true,
	}
}

// CloseIdleConnections closes the connections kept for later attempts; call
// it when the worker stops.
func (s *Sender) CloseIdleConnections() {
	if t, ok := s.transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// Shared header values: the transport only reads them.
var (
	contentTypeJSON = []string{"application/json"}
	userAgent       = []string{UserAgent}
)

// Send makes one attempt to deliver e to e.URL: nil when the receiver
// answered 2xx within the timeout, else an *application.DeliveryError.
// ctx bounds the attempt as well as the timeout; a cancelled ctx gives
// Outcome "error".
func (s *Sender) Send(ctx context.Context, e application.Event) error {
	start := time.Now()
	err := s.send(ctx, e, start)
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.logAttempt(ctx, e, err, time.Since(start))
	}
	if err != nil {
		return err // a typed nil would not compare equal to nil
	}
	return nil
}

func (s *Sender) send(ctx context.Context, e application.Event, now time.Time) *application.DeliveryError {
	if e.ID == "" {
		return failure(outcomeError, 0, "the event has no id")
	}
	body, fail := Body(e)
	if fail != nil {
		return failure(outcomeError, 0, fail.Error())
	}

	stamp := strconv.FormatInt(now.Unix(), 10)
	signature := Sign(s.secret, e.ID, now, body)

	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return failure(outcomeError, 0, "the receiver's URL is not valid")
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return failure(outcomeError, 0, "the receiver's URL is not http or https")
	}
	values := []string{e.ID, stamp, signature}
	req.Header = http.Header{
		"Content-Type":  contentTypeJSON,
		"User-Agent":    userAgent,
		HeaderID:        values[0:1:1],
		HeaderTimestamp: values[1:2:2],
		HeaderSignature: values[2:3:3],
	}
	if tp := traceparent.From(ctx); tp != "" {
		// The receiver may continue the attempt's trace.
		req.Header["Traceparent"] = []string{tp}
	}
	if u := req.URL.User; u != nil { // as http.Client would
		password, _ := u.Password()
		req.SetBasicAuth(u.Username(), password)
	}
	resp, err := s.transport.RoundTrip(req)
	if err != nil {
		return classify(ctx, err, time.Since(now))
	}
	return settle(resp)
}

// Body is what a delivery of e carries: with the plant payload (no Type)
// its plant's item as the store kept it; with the event payload the
// Standard Webhooks envelope of its event, rendered from the fields the
// store kept (adapters/internal/plantjson), the same on every attempt.
func Body(e application.Event) ([]byte, error) {
	if e.Type == "" {
		return e.Item, nil
	}
	body, err := plantjson.AppendEnvelope(nil, string(e.Type), e.Number, e.CreatedAt, e.Item)
	if err != nil {
		return nil, errors.New("the event's plant is not JSON")
	}
	return body, nil
}

// settle reads what the answer says, then drops the rest of it, up to
// maxDrain, so that the connection can serve the next attempt. A 2xx whose
// body is cut short by the timeout is still delivered: the receiver had
// answered.
func settle(resp *http.Response) *application.DeliveryError {
	defer resp.Body.Close()
	code := resp.StatusCode
	var fail *application.DeliveryError
	switch {
	case code >= 200 && code <= 299:
	case code >= 300 && code <= 399:
		fail = failure(outcomeRedirect, code, "answered "+statusLine(code)+"; redirects are not followed"+redirectTarget(resp))
	default:
		fail = failure(outcomeStatus, code, "answered "+statusLine(code)+quoteBody(resp.Body))
	}
	if resp.ContentLength != 0 {
		_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	}
	return fail
}

func (s *Sender) logAttempt(ctx context.Context, e application.Event, fail *application.DeliveryError, took time.Duration) {
	outcome, status := "delivered", 0
	if fail != nil {
		outcome, status = fail.Outcome, fail.Status
	}
	s.log.LogAttrs(ctx, slog.LevelDebug, "webhook attempt",
		slog.String("event", e.ID), slog.String("outcome", outcome),
		slog.Int("status", status), slog.Duration("duration", took))
}
