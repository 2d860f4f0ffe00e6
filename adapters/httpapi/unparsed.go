package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/plantstore/plantstore/adapters/internal/requestid"
)

// net/http answers some requests by itself, before any handler runs: those
// it cannot parse (a malformed request line or path, a bad header, a header
// block over the limit, an unknown transfer coding, another HTTP version)
// with a plain-text body, and an Expect other than 100-continue with an
// empty 417. The contract has every answer of the API carry the Error body,
// so the API's listener rewrites those answers on their way out.

// Listener wraps the API's listener so that what net/http answers by itself
// is a 400 with the Error body (40002, naming what was wrong as far as
// net/http said) and a request id, like every other answer of the API, and
// is logged and counted under the route "unparsed". Connections other than
// TCP ones are left as they are.
func (a *API) Listener(ln net.Listener) net.Listener {
	return unparsedListener{Listener: ln, api: a}
}

type unparsedListener struct {
	net.Listener
	api *API
}

func (l unparsedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tcp, ok := c.(*net.TCPConn); ok {
		return unparsedConn{TCPConn: tcp, api: l.api}, nil
	}
	return c, err
}

// unparsedConn embeds the TCP connection, so that net/http still finds
// what it looks for on one (CloseWrite, ReadFrom).
type unparsedConn struct {
	*net.TCPConn
	api *API
}

func (c unparsedConn) Write(p []byte) (int, error) {
	status, ok := cannedAnswer(p)
	if !ok {
		return c.TCPConn.Write(p)
	}
	if _, err := c.TCPConn.Write(c.api.unparsedAnswer(unparsedMessage(status))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// cannedHeaders follow the status line of net/http's own plain-text answers
// and of no other: it writes a handler's headers sorted, Connection before
// Content-Type, and always with Date.
const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// expectationFailed is how net/http answers an Expect other than
// 100-continue, after the protocol, which is the request's.
const expectationFailed = "417 Expectation Failed\r\nConnection: close\r\n"

// cannedAnswer reports whether p is one of net/http's own answers, each
// written in one piece: "HTTP/1.1 400 Bad Request[: detail]" and
// cannedHeaders, or its 417, which the API itself never sends. It returns
// the status line without the protocol.
func cannedAnswer(p []byte) (status string, ok bool) {
	rest, http11 := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !http11 {
		if rest, ok = bytes.CutPrefix(p, []byte("HTTP/1.0 ")); !ok {
			return "", false
		}
	}
	if bytes.HasPrefix(rest, []byte(expectationFailed)) {
		return "417 Expectation Failed", true
	}
	// net/http writes its plain-text refusals as HTTP/1.1, whatever the
	// request said.
	end := bytes.IndexByte(rest, '\r')
	if !http11 || end < 0 || !bytes.HasPrefix(rest[end:], []byte(cannedHeaders)) {
		return "", false
	}
	return string(rest[:end]), true
}

// unparsedMessage names what was wrong with a request net/http answered
// with status, as far as net/http said.
func unparsedMessage(status string) string {
	code, detail, _ := strings.Cut(status, " ")
	_, detail, _ = strings.Cut(detail, ": ")
	switch {
	case code == "417":
		return "Expect: only 100-continue is understood"
	case code == "431":
		return "headers: larger than the limit"
	case code == "501":
		return "Transfer-Encoding: not supported; send chunked or nothing"
	case code == "505":
		return "request: HTTP version not supported; send HTTP/1.1"
	case detail != "":
		return "request: " + detail
	}
	return "request: not a valid HTTP/1.1 request (its request line, path or headers)"
}

// unparsedAnswer is the whole answer to a request net/http could not parse.
func (a *API) unparsedAnswer(message string) []byte {
	id := a.ids.New()
	body := errorJSON(40002, message)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(body)))
	b.WriteString("\r\n" + http.CanonicalHeaderKey(requestid.Header) + ": ")
	b.WriteString(id)
	b.WriteString("\r\n\r\n")
	b.Write(body)
	a.metrics.countRequest("unparsed", "", http.StatusBadRequest)
	a.deps.Log.LogAttrs(context.Background(), slog.LevelInfo, "request",
		slog.String("route", "unparsed"),
		slog.Int("status", http.StatusBadRequest),
		slog.Int("bytes", len(body)),
		slog.String("request_id", id),
		slog.String("error", message),
	)
	return b.Bytes()
}
