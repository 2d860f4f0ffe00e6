package httpapi

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// serveOn serves h on the API's listener and returns its base URL.
func serveOn(t *testing.T, api *API, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(api.Listener(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// Only net/http's own answers are rewritten: a handler's answer that looks
// like one (plain text, a closed connection, a 400) goes out as written.
func TestTheListenerLeavesHandlersAnswersAlone(t *testing.T) {
	api := newTestAPI(t, seededStore(t), 0)
	base := serveOn(t, api, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "400 Bad Request")
	}))
	resp, err := http.Get(base + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || string(body) != "400 Bad Request" {
		t.Fatalf("got %d %q %q; want the handler's answer unchanged", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func TestCannedAnswersAreRecognisedAndNamed(t *testing.T) {
	for _, tt := range []struct {
		written, message string // message "" when not net/http's own
	}{
		{"HTTP/1.1 400 Bad Request" + cannedHeaders + "400 Bad Request", "request: not a valid HTTP/1.1 request (its request line, path or headers)"},
		{"HTTP/1.1 400 Bad Request: missing required Host header" + cannedHeaders + "400 Bad Request: missing required Host header", "request: missing required Host header"},
		{"HTTP/1.1 431 Request Header Fields Too Large" + cannedHeaders + "431 Request Header Fields Too Large", "headers: larger than the limit"},
		{"HTTP/1.1 501 Not Implemented" + cannedHeaders + "Unsupported transfer encoding", "Transfer-Encoding: not supported; send chunked or nothing"},
		{"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version" + cannedHeaders + "505", "request: HTTP version not supported; send HTTP/1.1"},
		{"HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Tue, 24 Nov 2026 10:00:00 GMT\r\nContent-Length: 0\r\n\r\n", "Expect: only 100-continue is understood"},
		{"HTTP/1.0 417 Expectation Failed\r\nConnection: close\r\nDate: Tue, 24 Nov 2026 10:00:00 GMT\r\nContent-Length: 0\r\n\r\n", "Expect: only 100-continue is understood"},
		{"HTTP/1.0 400 Bad Request" + cannedHeaders + "400 Bad Request", ""},
		{"HTTP/1.1 417 Expectation Failed\r\nContent-Type: application/json\r\n\r\n{}", ""},
		{"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Tue, 24 Nov 2026 10:00:00 GMT\r\n\r\nx", ""},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", ""},
		{`{"name":"HTTP/1.1 400 Bad Request` + cannedHeaders + `"}`, ""},
		{"HTTP/1.1 400 Bad Request", ""},
	} {
		status, ok := cannedAnswer([]byte(tt.written))
		if ok != (tt.message != "") {
			t.Errorf("%.50q: recognised %v, want %v", tt.written, ok, tt.message != "")
			continue
		}
		if ok && unparsedMessage(status) != tt.message {
			t.Errorf("%.50q: message %q, want %q", tt.written, unparsedMessage(status), tt.message)
		}
	}
}
