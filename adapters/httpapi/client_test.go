package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/client"
)

// The Go client (package client, over the code generated from
// docs/openapi.yaml) drives the served API: a change of the API that the
// client cannot follow, or of the client that the API does not take, fails
// here. Every exchange is also checked against the document.

// checkedTransport sends the client's requests as the test server's HTTP
// client does, checks each answer against the OpenAPI document before the
// client reads it, and keeps what was sent.
type checkedTransport struct {
	t  *testing.T
	s  *testServer
	mu sync.Mutex
	// sent are the requests sent, as "METHOD /path?query".
	sent []string
	// anonymous sends the requests without their Authorization.
	anonymous bool
}

func (c *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt := c.s.client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.mu.Lock()
	c.sent = append(c.sent, req.Method+" "+req.URL.RequestURI())
	c.mu.Unlock()
	if c.anonymous {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	c.s.contract.Check(c.t, req, resp, b)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// requests are the requests sent so far.
func (c *checkedTransport) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...)
}

// plantClient is a client of s that sends token, and the transport that
// checks and counts its exchanges. With token "", opts give the token
// (WithTokenSource), or none does and the client's requests reach the API
// without one: New wants a token, which the transport then takes off, as a
// proxy that drops the header would.
func (s *testServer) plantClient(t *testing.T, token string, opts ...client.Option) (*client.Client, *checkedTransport) {
	t.Helper()
	tr := &checkedTransport{t: t, s: s, anonymous: token == "" && len(opts) == 0}
	if tr.anonymous {
		token = "dropped on the way"
	}
	opts = append([]client.Option{client.WithHTTPClient(&http.Client{Transport: tr})}, opts...)
	if token != "" {
		opts = append(opts, client.WithToken(token))
	}
	c, err := client.New(s.url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

// apiError is what a refused call answers, or fails t unless err is an
// *client.Error with status and code, a message and a request id, which
// errors.Is matches with sentinel (nil: no sentinel to check).
func apiError(t *testing.T, err error, status, code int, sentinel error) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an *client.Error %d %d", err, err, status, code)
	}
	if e.StatusCode != status || e.Code != code || e.Message == "" || e.RequestID == "" {
		t.Fatalf("got %#v, want status %d, code %d, a message and a request id", e, status, code)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Fatalf("errors.Is(%v, %v) is false", err, sentinel)
	}
	return e
}
