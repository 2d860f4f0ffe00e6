package tracing

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// defaultTimeout is the specification's default of OTEL_EXPORTER_OTLP_TIMEOUT.
const defaultTimeout = 10 * time.Second

// loadEndpoint is the full URL spans are exported to and the variable it
// comes from, "" when neither endpoint variable is set. The exporter takes
// an endpoint it cannot parse for its own default, localhost:4318, and says
// so only in a log line: a value such as 127.0.0.1:4318, without a scheme,
// is refused here instead, naming its variable, so that start-up stops
// rather than export elsewhere.
func loadEndpoint(env func(string) string) (endpoint, variable string, err error) {
	if full := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); full != "" {
		return full, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", checkEndpoint("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", full)
	}
	base := env("OTEL_EXPORTER_OTLP_ENDPOINT")
	if base == "" {
		return "", "OTEL_EXPORTER_OTLP_ENDPOINT", nil
	}
	return strings.TrimSuffix(base, "/") + "/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT", checkEndpoint("OTEL_EXPORTER_OTLP_ENDPOINT", base)
}

// maskedEndpoint is an endpoint as shown: its password and query hidden,
// where a collector's credentials would be.
func maskedEndpoint(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		return "(masked)"
	}
	if u.RawQuery != "" {
		u.RawQuery = "xxxxx"
	}
	return u.Redacted()
}

// checkEndpoint refuses a value of variable k that is not an absolute
// http:// or https:// URL with a host, or that has a query, which the
// exporter would drop (and a base URL's /v1/traces would land in).
func checkEndpoint(k, v string) error {
	u, err := url.Parse(v)
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
		if u.RawQuery != "" || u.ForceQuery {
			return fmt.Errorf("%s=%s: must have no query: OTLP/HTTP sends spans without one", k, maskedEndpoint(v))
		}
		return nil
	case err == nil && u.User != nil:
		v = u.Redacted() // a password in the URL stays out of the line
	}
	return fmt.Errorf("%s=%s: must be an http:// or https:// URL", k, v)
}

// loadTimeout is how long one export may take, its retries included:
// OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT, in
// milliseconds. It bounds what a collector that never answers holds up.
func loadTimeout(env func(string) string) (time.Duration, Value, error) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		v := env(k)
		if v == "" {
			continue
		}
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return 0, Value{}, fmt.Errorf("%s=%s: must be a positive number of milliseconds", k, v)
		}
		return time.Duration(ms) * time.Millisecond, Value{k, v, fromEnvironment + timeoutNote}, nil
	}
	return defaultTimeout, Value{"OTEL_EXPORTER_OTLP_TIMEOUT", strconv.FormatInt(defaultTimeout.Milliseconds(), 10), byDefault + timeoutNote}, nil
}

const timeoutNote = "; milliseconds one export may take, its retries included"

// exportHeaders are the variables of the headers sent with every export,
// which the exporter reads itself; the traces one replaces the other.
var exportHeaders = []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}

// loadHeaders checks the headers variables as the exporter parses them: an
// entry it cannot parse it drops with a log line, so that a collector's
// token would silently go missing; here it stops start-up instead. The
// value is shown with every header's value masked: they carry credentials.
func loadHeaders(env func(string) string) (Value, error) {
	shown := Value{exportHeaders[0], "", byDefault + " none"}
	for _, k := range exportHeaders {
		v := env(k)
		if v == "" {
			continue
		}
		var names []string
		for entry := range strings.SplitSeq(v, ",") {
			name, value, ok := strings.Cut(entry, "=")
			name = strings.TrimSpace(name)
			if _, err := url.PathUnescape(value); !ok || !isHeaderName(name) || err != nil {
				return Value{}, fmt.Errorf("%s: must be name=value pairs, comma-separated, each name an HTTP header name and each value percent-encoded", k)
			}
			names = append(names, name+"=xxxxx")
		}
		shown = Value{k, strings.Join(names, ","), fromEnvironment + "; values masked"}
	}
	return shown, nil
}

// isHeaderName reports whether s is an HTTP header name (RFC 9110 token), as
// the exporter checks it.
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		ok := c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("!#$%&'*+-.^_`|~", c))
		if !ok {
			return false
		}
	}
	return true
}

// exporterVariables are the other variables of the OTLP exporter, which it
// reads itself: shown as given when set.
var exporterVariables = []string{
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
	"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_KEY", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE",
}
