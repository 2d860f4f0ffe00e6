package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
)

// withStore puts s where the store adapter's create port was, to show how
// the whole service answers a failing store.
func withStore(s *memory.Store) fx.Option {
	return fx.Decorate(func(application.PlantInserter) application.PlantInserter { return s })
}

// failing returns a memory store whose every call fails with err, or panics
// when err is nil.
func failing(err error) *memory.Store {
	s := memory.New()
	s.Inject(func() error {
		if err == nil {
			panic("store exploded")
		}
		return err
	})
	return s
}

func TestFaultsAreErrorBodies(t *testing.T) {
	tests := []struct {
		name   string
		store  *memory.Store
		status int
		code   string
	}{
		{"store unavailable", failing(fmt.Errorf("pool: %w", application.ErrUnavailable)), 503, "50301"},
		{"store timeout", failing(context.DeadlineExceeded), 503, "50301"},
		{"unexpected fault", failing(errors.New("pq: relation \"plants\" does not exist")), 500, "50001"},
		{"panic", failing(nil), 500, "50001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startService(t, storeURLs()["sqlite"](t), nil, withStore(tt.store))
			r := s.create(t, `{"id":1,"name":"a"}`)
			r.expectError(t, tt.status, tt.code)
			if tt.status == 503 && r.header.Get("Retry-After") == "" {
				t.Fatal("503 without Retry-After")
			}
			if tt.status == 500 {
				id := r.header.Get("X-Request-ID")
				if !strings.Contains(r.body, id) || strings.Contains(r.body, "pq") || strings.Contains(r.body, "exploded") {
					t.Fatalf("a 500 carries the request id and nothing else: %s", r.body)
				}
			}
			// The service keeps serving.
			s.do(t, "GET", "/openapi.yaml", nil, nil).expect(t, 200, "")
		})
	}
}

// TestRefusedRequestsAreNotRead sends headers that fail authentication and
// then never sends the announced body: the answer must come anyway.
func TestRefusedRequestsAreNotRead(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.api, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no answer without the body: %v", err)
	}
	if !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 401") {
		t.Fatalf("got %q", buf[:n])
	}
	_ = http.StatusUnauthorized
}
