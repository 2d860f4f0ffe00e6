package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/application"
)

// operations are one request per route that reaches the store.
var operations = []struct{ method, path, body string }{
	{http.MethodPost, "/plants", `{"id":2,"name":"Basil"}`},
	{http.MethodGet, "/plants/1", ``},
	{http.MethodGet, "/plants?limit=5", ``},
	{http.MethodDelete, "/plants/1", ``},
	{http.MethodPatch, "/plants/1", `{"name":"Sage"}`},
	{http.MethodGet, "/events?limit=5", ``},
}

// Every operation answers a failing store with the documented Error body:
// 503 with Retry-After when the store is unavailable, 500 carrying only the
// request id for any other fault or a panic. The API keeps serving.
func TestEveryOperationAnswersStoreFaults(t *testing.T) {
	faults := []struct {
		name   string
		fault  func() error
		status int
		code   string
	}{
		{"unavailable", func() error { return fmt.Errorf("pool: %w", application.ErrUnavailable) }, 503, "50301"},
		{"deadline", func() error { return context.DeadlineExceeded }, 503, "50301"},
		{"fault", func() error { return errors.New(`pq: relation "plants" does not exist`) }, 500, "50001"},
		{"panic", func() error { panic("store exploded") }, 500, "50001"},
	}
	for _, op := range operations {
		for _, f := range faults {
			t.Run(op.method+" "+op.path+" "+f.name, func(t *testing.T) {
				store := seededStore(t)
				store.Inject(f.fault)
				s := startServer(t, withStore(store))
				r := s.do(t, op.method, op.path, map[string]string{
					"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json",
				}, []byte(op.body))
				r.expectError(t, f.status, f.code)
				if f.status == 503 && r.header.Get("Retry-After") == "" {
					t.Fatal("503 without Retry-After")
				}
				if want := `{"error":50001,"message":"` + r.header.Get("X-Request-ID") + `"}`; f.status == 500 && r.body != want {
					t.Fatalf("got %s; a 500's message is the request id and nothing else: %s", r.body, want)
				}
				// The API keeps serving.
				s.do(t, "GET", "/openapi.yaml", nil, nil).expect(t, 200, "")
				if f.status == 500 && !strings.Contains(s.logs.String(), `"level":"ERROR"`) {
					t.Error("a fault of the store was not logged as an error")
				}
			})
		}
	}
}
