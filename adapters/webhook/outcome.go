package webhook

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/plantstore/plantstore/application"
)

// The outcomes of application.DeliveryError.
const (
	outcomeStatus   = "status"
	outcomeRedirect = "redirect"
	outcomeTimeout  = "timeout"
	outcomeRefused  = "refused"
	outcomeError    = "error"
)

// Bounds on what a Detail repeats of the outside world.
const (
	maxQuotedBody = 200 // bytes of a receiver's answer
	maxDetail     = 300 // bytes of an error's text
)

func failure(outcome string, status int, detail string) *application.DeliveryError {
	return &application.DeliveryError{Outcome: outcome, Status: status, Detail: detail}
}

// classify turns a failed round trip into a DeliveryError. ctx is the
// attempt's: when it has expired, whatever the transport reports is the
// timeout's doing.
func classify(ctx context.Context, err error, took time.Duration) *application.DeliveryError {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return failure(outcomeTimeout, 0, "no answer within "+took.Round(time.Millisecond).String())
	case context.Canceled:
		return failure(outcomeError, 0, "the attempt was cancelled")
	}
	// A url.Error, which a transport built on http.Client may return,
	// repeats the URL, which may hold a credential.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	detail := sanitize([]byte(err.Error()), maxDetail)
	var dns *net.DNSError
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		// Even a lookup that timed out within the attempt's time means
		// no connection could be made.
		return failure(outcomeRefused, 0, detail)
	case errors.As(err, &ne) && ne.Timeout():
		// The dial, TLS handshake or response header timeout.
		return failure(outcomeTimeout, 0, detail)
	case errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect"),
		errors.Is(err, syscall.ECONNREFUSED):
		return failure(outcomeRefused, 0, detail)
	}
	return failure(outcomeError, 0, detail)
}

// statusLine is "404 Not Found": the code and Go's text for it, not the
// receiver's reason phrase, which could say anything.
func statusLine(code int) string {
	if text := http.StatusText(code); text != "" {
		return strconv.Itoa(code) + " " + text
	}
	return strconv.Itoa(code)
}

// redirectTarget names where a redirect pointed, scheme and host only: its
// path and query may carry a credential, as the receiver's URL may.
func redirectTarget(resp *http.Response) string {
	loc, err := resp.Location()
	if err != nil || loc.Host == "" {
		return ""
	}
	return " (to " + sanitize([]byte(loc.Scheme+"://"+loc.Host), 100) + ")"
}

// quoteBody returns ": " and the start of an answer's body, cleaned up for a
// log line, or "" when it has none.
func quoteBody(body io.Reader) string {
	buf := make([]byte, maxQuotedBody)
	n, _ := io.ReadFull(body, buf)
	if s := sanitize(buf[:n], maxQuotedBody); s != "" {
		return ": " + s
	}
	return ""
}

// sanitize makes text from outside fit one log line: control and other
// unprintable characters become spaces, runs of spaces one space, invalid
// UTF-8 U+FFFD, and the result is at most max bytes, never cut inside a
// character.
func sanitize(b []byte, max int) string {
	var out strings.Builder
	out.Grow(min(len(b), max))
	space := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 && !utf8.FullRune(b) {
			break // a character cut by a bounded read
		}
		b = b[size:]
		if r == ' ' || !unicode.IsPrint(r) {
			space = out.Len() > 0
			continue
		}
		need := utf8.RuneLen(r)
		if space {
			need++
		}
		if out.Len()+need > max {
			break
		}
		if space {
			out.WriteByte(' ')
			space = false
		}
		out.WriteRune(r)
	}
	return out.String()
}
