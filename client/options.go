package client

import (
	"context"
	"errors"
	"net/http"
)

// Option sets up a Client in New: WithToken or WithTokenSource (one of
// them is required), WithHTTPClient, WithUserAgent. Only this package makes
// them.
type Option interface {
	apply(*settings) error
}

// optionFunc is an Option made of the function that applies it.
type optionFunc func(*settings) error

func (f optionFunc) apply(s *settings) error { return f(s) }

// settings is what the options of New set.
type settings struct {
	http      *http.Client
	userAgent string
	token     func(context.Context) (string, error)
}

// WithToken sends token, a JWT, as the bearer token of every request. Every
// operation of the API needs one, so New needs WithToken or
// WithTokenSource; the API refuses a token it does not accept
// (ErrUnauthorized) and one whose scope does not cover the operation
// (ErrForbidden): writes need plants:write, reads plants:read by default.
func WithToken(token string) Option {
	return optionFunc(func(s *settings) error {
		if token == "" {
			return errors.New("plantstore: WithToken: the token is empty")
		}
		s.token = func(context.Context) (string, error) { return token, nil }
		return nil
	})
}

// WithTokenSource asks source for the bearer token before every request, so
// that tokens that expire can be renewed (source may cache one until shortly
// before its exp). When source fails, the request is not sent and the call
// fails with its error, wrapped. Of WithToken and WithTokenSource, the one
// given last is used.
func WithTokenSource(source func(ctx context.Context) (string, error)) Option {
	return optionFunc(func(s *settings) error {
		if source == nil {
			return errors.New("plantstore: WithTokenSource: the source is nil")
		}
		s.token = source
		return nil
	})
}

// WithHTTPClient sends the requests through hc: its transport, its time-out
// (none when hc.Timeout is 0: then only each call's context bounds it), its
// redirects. Without it, the client uses a *http.Client of its own with
// DefaultTimeout and http.DefaultTransport.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(s *settings) error {
		if hc == nil {
			return errors.New("plantstore: WithHTTPClient: the client is nil")
		}
		s.http = hc
		return nil
	})
}

// WithUserAgent sends ua as the User-Agent of every request instead of
// DefaultUserAgent, so that the service's access log tells callers apart.
func WithUserAgent(ua string) Option {
	return optionFunc(func(s *settings) error {
		if ua == "" {
			return errors.New("plantstore: WithUserAgent: the user agent is empty")
		}
		s.userAgent = ua
		return nil
	})
}
