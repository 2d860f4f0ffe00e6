package httpapi

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
)

// A client that goes away while its request waits for the store is no
// fault of the service: the access line records 499, as nginx does, and
// nothing is logged as an error.
func TestAClientThatGoesAwayIsNoFault(t *testing.T) {
	store := memory.New()
	waiting := make(chan struct{})
	store.InjectContext(func(ctx context.Context) error {
		close(waiting)
		<-ctx.Done() // until the server ends the request, when its client goes
		return ctx.Err()
	})
	s := startServer(t, withStore(store))
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /plants/7 HTTP/1.1\r\nHost: plantstore\r\nAuthorization: Bearer %s\r\nX-Request-ID: gone-away\r\n\r\n", s.token(t, nil))
	<-waiting
	_ = c.Close()
	if line := s.accessLine(t, "gone-away"); !strings.Contains(line, `"status":499`) {
		t.Errorf("access line %s; want status 499", line)
	}
	store.Inject(nil)
	s.expectHealthy(t)
}
