package client

import (
	"context"
	"net/http"
)

// WithBearerToken sends token in the Authorization header of every request,
// as the bearerAuth scheme of the document asks: the API's plant operations
// refuse a request without one (401).
func WithBearerToken(token string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
}
