package httpapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/client"
)

// clientCall is one operation sent with the client.
type clientCall struct {
	name  string
	write bool // needs plants:write, not plants:read
	call  func(ctx context.Context, c *client.Client) error
}

// plantCalls are the plant operations, one call each, on the plant with
// id 1 (seededStore's Aloe).
var plantCalls = []clientCall{
	{"create", true, func(ctx context.Context, c *client.Client) error {
		_, err := c.Create(ctx, client.NewPlant{ID: 2, Name: "Basil"})
		return err
	}},
	{"read", false, func(ctx context.Context, c *client.Client) error {
		_, err := c.Get(ctx, 1)
		return err
	}},
	{"list", false, func(ctx context.Context, c *client.Client) error {
		for _, err := range c.List(ctx, client.ListOptions{}) {
			if err != nil {
				return err
			}
		}
		return nil
	}},
	{"change", true, func(ctx context.Context, c *client.Client) error {
		_, err := c.Change(ctx, 1, client.Patch{}.SetName("Sage"))
		return err
	}},
	{"delete", true, func(ctx context.Context, c *client.Client) error {
		return c.Delete(ctx, 1)
	}},
}

// Every operation refuses a request without a token, with a refused one or
// without its scope: the client answers the *client.Error with the API's
// code, which errors.Is matches with ErrUnauthorized or ErrForbidden.
func TestClientRefusals(t *testing.T) {
	s := startServer(t, withStore(seededStore(t)))
	for _, op := range plantCalls {
		other := "plants:write"
		if op.write {
			other = "plants:read"
		}
		for _, r := range []struct {
			name     string
			token    string
			status   int
			code     int
			sentinel error
		}{
			{"no token", "", 401, client.CodeMissingToken, client.ErrUnauthorized},
			{"expired token", s.keys.Expired(t), 401, client.CodeInvalidToken, client.ErrUnauthorized},
			{"token of another key", s.keys.UnknownKey(t), 401, client.CodeInvalidToken, client.ErrUnauthorized},
			{"without the scope", s.keys.Scoped(t, other), 403, client.CodeInsufficientScope, client.ErrForbidden},
		} {
			t.Run(op.name+" "+r.name, func(t *testing.T) {
				c, _ := s.plantClient(t, r.token)
				apiError(t, op.call(t.Context(), c), r.status, r.code, r.sentinel)
			})
		}
	}
	s.expectHealthy(t)
}

// A token source is asked before every request: a rotated token is used as
// soon as the source gives it.
func TestClientTokenSource(t *testing.T) {
	s := startServer(t, withStore(seededStore(t)))
	tokens := []string{s.keys.Expired(t), s.token(t, nil)}
	var asked int
	c, _ := s.plantClient(t, "", client.WithTokenSource(func(context.Context) (string, error) {
		asked++
		return tokens[min(asked, len(tokens))-1], nil
	}))
	_, err := c.Get(t.Context(), 1)
	apiError(t, err, 401, client.CodeInvalidToken, client.ErrUnauthorized)
	if p, err := c.Get(t.Context(), 1); err != nil || p.Name != "Aloe" || asked != 2 {
		t.Fatalf("with the renewed token: %+v %v, the source asked %d times", p, err, asked)
	}
}

// Requests the API cannot take: a field that breaks a rule or a parameter
// out of range (400, the message naming it) and a body over the limit
// (413); and a base URL that is not the service's (404, no such route,
// which is not ErrNotFound). Nothing is stored.
func TestClientBadRequests(t *testing.T) {
	s := startServer(t, withStore(seededStore(t)), withMaxBody(256))
	c, _ := s.plantClient(t, s.token(t, nil))
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name    string
		status  int
		code    int
		mention string // what the message names
		call    func(ctx context.Context, c *client.Client) error
	}{
		{"create without a name", 400, client.CodeInvalidField, "name", func(ctx context.Context, c *client.Client) error {
			_, err := c.Create(ctx, client.NewPlant{ID: 2})
			return err
		}},
		{"create with a control character", 400, client.CodeInvalidField, "name", func(ctx context.Context, c *client.Client) error {
			_, err := c.Create(ctx, client.NewPlant{ID: 2, Name: "Basil\n"})
			return err
		}},
		{"create with a tag too long", 400, client.CodeInvalidField, "tag", func(ctx context.Context, c *client.Client) error {
			_, err := c.Create(ctx, client.NewPlant{ID: 2, Name: "Basil", Tag: strings.Repeat("t", 65)})
			return err
		}},
		{"change to an empty name", 400, client.CodeInvalidField, "name", func(ctx context.Context, c *client.Client) error {
			_, err := c.Change(ctx, 1, client.Patch{}.SetName(""))
			return err
		}},
		{"change to an empty tag", 400, client.CodeInvalidField, "tag", func(ctx context.Context, c *client.Client) error {
			_, err := c.Change(ctx, 1, client.Patch{}.SetTag(""))
			return err
		}},
		{"list 1001 a page", 400, client.CodeInvalidField, "limit", func(ctx context.Context, c *client.Client) error {
			_, err := c.ListPage(ctx, client.ListOptions{PageSize: 1001})
			return err
		}},
		{"list -1 a page", 400, client.CodeInvalidField, "limit", func(ctx context.Context, c *client.Client) error {
			_, err := c.ListPage(ctx, client.ListOptions{PageSize: -1})
			return err
		}},
		{"list a tag with a control character", 400, client.CodeInvalidField, "tag", func(ctx context.Context, c *client.Client) error {
			_, err := c.ListPage(ctx, client.ListOptions{Tag: "a\tb"})
			return err
		}},
		{"create too large", 413, client.CodeBodyTooLarge, "", func(ctx context.Context, c *client.Client) error {
			_, err := c.Create(ctx, client.NewPlant{ID: 2, Name: long})
			return err
		}},
		{"change too large", 413, client.CodeBodyTooLarge, "", func(ctx context.Context, c *client.Client) error {
			_, err := c.Change(ctx, 1, client.Patch{}.SetName(long))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := apiError(t, tc.call(t.Context(), c), tc.status, tc.code, nil)
			if !strings.Contains(e.Message, tc.mention) || !strings.Contains(e.Error(), e.Message) {
				t.Errorf("message %q (%v), want it to name %q", e.Message, e, tc.mention)
			}
		})
	}
	if p, err := c.Get(t.Context(), 1); err != nil || p.Name != "Aloe" {
		t.Errorf("plant 1 after the refusals: %+v %v", p, err)
	}
	apiError(t, c.Delete(t.Context(), 2), 404, client.CodeNoSuchPlant, client.ErrNotFound)

	wrong, err := client.New(s.url+"/v9/", client.WithToken(s.token(t, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.Get(t.Context(), 1)
	apiError(t, err, 404, client.CodeNoSuchRoute, nil)
	if errors.Is(err, client.ErrNotFound) {
		t.Errorf("no such route is ErrNotFound: %v", err)
	}
	s.expectHealthy(t)
}

// A failing store is answered with 503 and Retry-After, or 500, to every
// plant operation: the *client.Error carries the wait, or the request id
// that finds the logged fault.
func TestClientStoreFaults(t *testing.T) {
	for _, f := range []struct {
		name     string
		fault    error
		status   int
		code     int
		sentinel error
	}{
		{"unavailable", fmt.Errorf("pool: %w", application.ErrUnavailable), 503, client.CodeUnavailable, client.ErrUnavailable},
		{"fault", errors.New("disk on fire"), 500, client.CodeInternalError, nil},
	} {
		store := seededStore(t)
		store.Inject(func() error { return f.fault })
		s := startServer(t, withStore(store))
		c, _ := s.plantClient(t, s.token(t, nil))
		for _, op := range plantCalls {
			t.Run(op.name+" "+f.name, func(t *testing.T) {
				e := apiError(t, op.call(t.Context(), c), f.status, f.code, f.sentinel)
				switch {
				case f.status == 503 && e.RetryAfter < time.Second:
					t.Errorf("Retry-After %v, want at least a second", e.RetryAfter)
				case f.status == 500 && e.Message != e.RequestID:
					t.Errorf("500 message %q, want the request id %q", e.Message, e.RequestID)
				}
			})
		}
	}
}
