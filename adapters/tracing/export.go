package tracing

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// defaultTimeout is the specification's default of OTEL_EXPORTER_OTLP_TIMEOUT.
const defaultTimeout = 10 * time.Second

// loadEndpoint is the full URL spans are exported to, "" when neither
// endpoint variable is set. The exporter takes an endpoint it cannot parse
// for its own default, localhost:4318, and says so only in a log line: a
// value such as 127.0.0.1:4318, without a scheme, is refused here instead,
// naming its variable, so that start-up stops rather than export elsewhere.
func loadEndpoint(env func(string) string) (string, error) {
	if full := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); full != "" {
		return full, checkEndpoint("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", full)
	}
	base := env("OTEL_EXPORTER_OTLP_ENDPOINT")
	if base == "" {
		return "", nil
	}
	return strings.TrimSuffix(base, "/") + "/v1/traces", checkEndpoint("OTEL_EXPORTER_OTLP_ENDPOINT", base)
}

// checkEndpoint refuses a value of variable k that is not an absolute
// http:// or https:// URL with a host.
func checkEndpoint(k, v string) error {
	u, err := url.Parse(v)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	if err == nil && u.User != nil {
		v = u.Redacted() // a password in the URL stays out of the line
	}
	return fmt.Errorf("%s=%s: must be an http:// or https:// URL", k, v)
}

// loadTimeout is how long one export may take, its retries included:
// OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT, in
// milliseconds. It bounds what a collector that never answers holds up.
func loadTimeout(env func(string) string) (time.Duration, error) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		v := env(k)
		if v == "" {
			continue
		}
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return 0, fmt.Errorf("%s=%s: must be a positive number of milliseconds", k, v)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	return defaultTimeout, nil
}
