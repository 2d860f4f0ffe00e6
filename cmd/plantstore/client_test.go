package main

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/plantstore/plantstore/client"
)

// apiClient is a Go client of the service that sends token, each answer
// checked against the OpenAPI document before the client reads it.
func (s *service) apiClient(t *testing.T, token string) *client.Client {
	t.Helper()
	checked := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		s.contract.Check(t, req, resp, b)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return resp, err
	})
	c, err := client.New(s.api, client.WithHTTPClient(&http.Client{Transport: checked}), client.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// roundTripFunc is a function that sends HTTP requests.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
