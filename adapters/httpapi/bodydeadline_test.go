package httpapi

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// A body still arriving at the request's deadline is cut off there: the
// client is answered then, with the malformed-body Error that names the
// deadline, on a connection that closes, and nothing is stored. The server
// has no read timeout here, so without the cut the answer would wait for a
// body that never comes.
func TestABodyLateForTheDeadlineIsAnsweredAtIt(t *testing.T) {
	s := startServer(t, withRequestTimeout(300*time.Millisecond))
	good := s.token(t, nil)
	s.create(t, `{"id":2,"name":"Fern"}`).expect(t, 200, `{"name":"Fern"}`)
	for _, c := range []struct{ method, path, contentType, part string }{
		{"POST", "/plants", "application/json", `{"id":1,"name":"Mon`},
		{"PATCH", "/plants/2", "application/merge-patch+json", `{"name":"Ivy`},
	} {
		t.Run(c.method, func(t *testing.T) {
			conn := s.dial(t)
			head := c.method + " " + c.path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + good +
				"\r\nContent-Type: " + c.contentType + "\r\nContent-Length: 100\r\n\r\n" + c.part
			if _, err := io.WriteString(conn, head); err != nil {
				t.Fatal(err)
			}
			got := readUntilClosed(t, conn, nil)
			resp, b := s.readAnswer(t, bytes.NewReader(got), c.method, c.path)
			want := `{"error":40001,"message":"body: not received within the request's deadline"}`
			if resp.StatusCode != 400 || strings.TrimSpace(string(b)) != want || !resp.Close {
				t.Fatalf("got %d %s (close %v), want 400 %s on a closing connection", resp.StatusCode, b, resp.Close, want)
			}
		})
	}
	s.call(t, "GET", "/plants/1").expectError(t, 404, "40402")
	s.call(t, "GET", "/plants/2").expect(t, 200, `{"id":2,"name":"Fern"}`)
}
