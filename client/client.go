package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/plantstore/plantstore/client/internal/oapi"
)

// DefaultTimeout bounds each request, its answer read whole, when New is
// given no *http.Client of its own (WithHTTPClient): long enough for the
// service's deadline on a slow store (it answers 503 past it), short enough
// that a caller without a context deadline is not left waiting forever.
const DefaultTimeout = 30 * time.Second

// DefaultUserAgent is the User-Agent of each request unless WithUserAgent
// sets another.
const DefaultUserAgent = "plantstore-client-go"

// maxBody bounds an answer read into memory: a page of 1000 plants of the
// longest names and tags is under 1.2 MB.
const maxBody = 16 << 20

// Client calls the Plant Store API. It is safe for concurrent use. Make one
// with New: the zero Client has no address and no token, and each of its
// methods fails with an error that says so.
type Client struct {
	api       *oapi.Client
	userAgent string
	token     func(context.Context) (string, error)
}

// New returns a client of the service at baseURL, an absolute http or https
// URL (http://localhost:8080, or https://example.com/plantstore/ behind a
// proxy that serves it under a path). Every operation of the API needs a
// bearer token, so opts must hold WithToken or WithTokenSource: without one
// New fails, as it does with an empty token, rather than make a client
// whose every call the API refuses.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("plantstore: base URL %q: want an absolute http or https URL without query, such as http://localhost:8080", baseURL)
	}
	s := settings{userAgent: DefaultUserAgent}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("plantstore: New: a nil Option")
		}
		if err := o.apply(&s); err != nil {
			return nil, err
		}
	}
	if s.token == nil {
		return nil, errors.New("plantstore: New: no token: give WithToken or WithTokenSource")
	}
	if s.http == nil {
		s.http = &http.Client{Timeout: DefaultTimeout}
	}
	c := &Client{userAgent: s.userAgent, token: s.token}
	c.api, err = oapi.NewClient(baseURL, oapi.WithHTTPClient(s.http), oapi.WithRequestEditorFn(c.authorize))
	if err != nil {
		return nil, fmt.Errorf("plantstore: %w", err)
	}
	return c, nil
}

// errZeroClient is what each method of a Client not made by New answers.
var errZeroClient = errors.New("plantstore: a Client not made by New: use client.New")

// ready reports whether c was made by New: the zero Client (or a nil one)
// answers errZeroClient rather than panic on a nil pointer.
func (c *Client) ready() error {
	if c == nil || c.api == nil {
		return errZeroClient
	}
	return nil
}

// authorize gives every request the user agent and the bearer token.
func (c *Client) authorize(ctx context.Context, req *http.Request) error {
	req.Header.Set("User-Agent", c.userAgent)
	token, err := c.token(ctx)
	if err != nil {
		return fmt.Errorf("token source: %w", err)
	}
	if token == "" {
		return errors.New("the token source gave an empty token")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return nil
}

// read reads the answer to a call that returned resp and err: its body when
// its status is one of want, else the *Error the API sent.
func read(resp *http.Response, err error, want ...int) ([]byte, error) {
	if err != nil {
		// No answer: the token source failed, or the request was not sent
		// or not answered (a *url.Error of net/http).
		return nil, fmt.Errorf("plantstore: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("plantstore: reading the answer: %w", err)
	}
	if !slices.Contains(want, resp.StatusCode) {
		return nil, errorOf(resp, body, time.Now())
	}
	return body, nil
}

// decodePlant decodes body, a plant the API answered, into a Plant whose
// ETag is the answer's.
func decodePlant(resp *http.Response, body []byte) (Plant, error) {
	var p Plant
	if err := json.Unmarshal(body, &p); err != nil {
		return Plant{}, fmt.Errorf("plantstore: the answer is not a plant: %w", err)
	}
	p.ETag = resp.Header.Get("ETag")
	return p, nil
}
